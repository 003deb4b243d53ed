import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// Its int files start the servers they test themselves.
// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, []),
    // Files that start servers must not fight over 2 cores.
    fileParallelism: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
}));
