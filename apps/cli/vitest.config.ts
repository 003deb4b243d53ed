import { defineConfig } from 'vitest/config';

// The CLI's own tests run it against a stub HTTP server; the tests against a running stack
// live in test/e2e/cli.test.ts.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
