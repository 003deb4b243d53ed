import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// The quick bench starts its own Redis and services; it needs no global setup.
// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, []),
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
}));
