import { configDefaults, defineConfig } from 'vitest/config';
import { testReporters } from '@agent-reach/tsconfig/vitest-loops.mjs';
import { CLUSTER_LEG, CLUSTER_ONLY } from './cluster-leg.ts';

// REACH_TEST_REDIS=cluster (`npm run test:cluster`): the cluster leg, on a Redis Cluster.
const clusterLeg = process.env.REACH_TEST_REDIS === 'cluster';

export default defineConfig({
  test: {
    include: clusterLeg ? [...CLUSTER_LEG] : ['e2e/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(clusterLeg ? [] : CLUSTER_ONLY)],
    globalSetup: ['@agent-reach/testkit/global-setup'],
    ...testReporters(clusterLeg ? 'e2e-cluster-leg' : 'e2e'),
    // Every file starts its own services: run them one at a time on 2 cores.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
