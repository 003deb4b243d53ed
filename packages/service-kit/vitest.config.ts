import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// Its int files start what they need (a Redis of their own through the test kit's helpers).
// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, []),
  },
}));
