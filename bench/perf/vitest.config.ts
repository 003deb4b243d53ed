import { defineConfig } from 'vitest/config';

// The quick bench starts its own Redis and services; it needs no global setup.
export default defineConfig({
  test: { include: ['src/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 30_000 },
});
