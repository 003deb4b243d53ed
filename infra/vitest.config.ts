import { defineConfig } from 'vitest/config';

// infra's tests read files and schemas only (no service): they share their workers' module graph
// and run in threads, as every workspace's unit loop does (packages/tsconfig/vitest-loops.mjs).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'threads',
    isolate: false,
  },
});
