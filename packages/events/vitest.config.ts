import { defineConfig } from 'vitest/config';

// With INFLUX_URL set the integration tests use it (and INFLUX_V2_URL); otherwise testkit's
// global setup starts InfluxDB 1.x with an nginx serving /api/v2/write in front of it.
const fromEnv = Boolean(process.env.INFLUX_URL);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    globalSetup: fromEnv ? [] : ['@agent-reach/testkit/global-setup'],
    // Files that start servers must not fight over 2 cores.
    fileParallelism: false,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
