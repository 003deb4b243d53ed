import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// The int loop starts (or finds, through REDIS_URL) one real Redis for the run; tests isolate by
// key prefix.
// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, ['./src/testing/global-setup.ts']),
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
}));
