// One ESLint config for every workspace (each runs `eslint src` from its own folder).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { reachPlugin } from './infra/eslint/promise-args.mjs';
import { scriptCallRestriction } from './infra/eslint/script-calls.mjs';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.reach/**', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX, reach: reachPlugin },
    rules: {
      // No promise is started before what it is made from is computed (infra/eslint/promise-args.mjs).
      'reach/promise-args': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'import-x/no-cycle': 'error',
      'no-console': 'error',
      // Lua scripts are called through their definitions only (infra/eslint/script-calls.mjs).
      'no-restricted-syntax': ['error', scriptCallRestriction],
      // Fastify plugins and handlers are async by convention, with or without an await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', '**/testkit/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-console': 'off',
      // A test's throw fails the test: its promise arrays are not a process's to guard.
      'reach/promise-args': 'off',
    },
  },
);
