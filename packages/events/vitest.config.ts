import { defineConfig } from 'vitest/config';
import { loopFiles } from '@agent-reach/tsconfig/vitest-loops.mjs';

// With INFLUX_URL set the integration tests use it (and INFLUX_V2_URL); otherwise testkit's
// global setup starts InfluxDB 1.x with an nginx serving /api/v2/write in front of it.
const fromEnv = Boolean(process.env.INFLUX_URL);

// `--mode unit` runs the files that need no service, `--mode int` the `.int` ones (vitest-loops).
export default defineConfig(({ mode }) => ({
  test: {
    ...loopFiles(mode, fromEnv ? [] : undefined),
    // Files that start servers must not fight over 2 cores.
    fileParallelism: false,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
}));
