// The published build: ESM and CommonJS with bundled declarations, @agent-reach/protocol bundled
// in (it is not published), then dist/package.json for `npm pack apps/worker-sdk/dist`. The echo
// example goes along as plain JavaScript (`npm start` runs it from there).
import { defineConfig } from 'tsdown';
import { writePublishManifest } from '@agent-reach/tsconfig/publish.mjs';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', http: 'src/http.ts' },
    format: ['esm', 'cjs'],
    platform: 'node',
    target: 'node20',
    outDir: 'dist',
    // tsconfig.build.json resolves workspace packages to their built declarations (dist).
    tsconfig: 'tsconfig.build.json',
    dts: { resolver: 'tsc' },
    inputOptions: {
      resolve: { conditionNames: ['agent-reach-dist', 'node', 'import', 'default'] },
    },
    deps: { alwaysBundle: [/^@agent-reach\//] },
    hooks: {
      'build:done': () =>
        writePublishManifest({
          pkgDir: import.meta.dirname,
          exports: {
            '.': {
              import: { types: './index.d.mts', default: './index.mjs' },
              require: { types: './index.d.cts', default: './index.cjs' },
            },
            './http': {
              import: { types: './http.d.mts', default: './http.mjs' },
              require: { types: './http.d.cts', default: './http.cjs' },
            },
            './package.json': './package.json',
          },
          extra: { main: './index.cjs', module: './index.mjs', types: './index.d.cts' },
        }),
    },
  },
  {
    entry: { 'examples/echo-agent': 'examples/echo-agent.ts' },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outDir: 'dist',
    clean: false,
    // The example imports the package by its name, which resolves to dist/index.mjs from here.
    deps: { neverBundle: ['@agent-reach/worker-sdk'] },
  },
]);
