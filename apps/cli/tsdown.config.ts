// The published build: the `reach` command (ESM, with its shebang) and runCli as a library (ESM
// and CommonJS, with bundled declarations); the workspace packages it uses (@agent-reach/protocol,
// @agent-reach/analytics/window) bundled in. Then dist/package.json for `npm pack apps/cli/dist`.
import { defineConfig, type UserConfig } from 'tsdown';
import { writePublishManifest } from '@agent-reach/tsconfig/publish.mjs';

const common: UserConfig = {
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  // tsconfig.build.json resolves workspace packages to their built declarations (dist).
  tsconfig: 'tsconfig.build.json',
  inputOptions: { resolve: { conditionNames: ['agent-reach-dist', 'node', 'import', 'default'] } },
  deps: { alwaysBundle: [/^@agent-reach\//] },
  hooks: {
    'build:done': () =>
      writePublishManifest({
        pkgDir: import.meta.dirname,
        bin: { reach: './main.mjs' },
        exports: {
          '.': {
            import: { types: './cli.d.mts', default: './cli.mjs' },
            require: { types: './cli.d.cts', default: './cli.cjs' },
          },
          './package.json': './package.json',
        },
      }),
  },
};

export default defineConfig([
  {
    ...common,
    entry: { cli: 'src/cli.ts', main: 'src/main.ts' },
    format: 'esm',
    dts: { resolver: 'tsc' },
    outputOptions: { banner: (chunk) => (chunk.name === 'main' ? '#!/usr/bin/env node' : '') },
  },
  // main.ts awaits at the top level, which CommonJS cannot: only the library is built for it.
  {
    ...common,
    entry: { cli: 'src/cli.ts' },
    format: 'cjs',
    dts: { resolver: 'tsc' },
    clean: false,
  },
]);
