import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// The CLI's own tests run it against a stub HTTP server; the tests against a running stack
// live in test/e2e/cli.test.ts.
// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, []),
    testTimeout: 20_000,
  },
}));
