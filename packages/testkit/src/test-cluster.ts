import { startLocalCluster, type LocalCluster } from '@agent-reach/process-kit';

/** Which Redis a test run uses. */
export type TestRedisMode = 'standalone' | 'cluster';

/**
 * The Redis mode of this run: `cluster` when `REACH_TEST_REDIS=cluster` (the cluster leg of
 * `npm test`), else `standalone`.
 * @throws naming the variable when it holds anything else.
 */
export function testRedisMode(env: NodeJS.ProcessEnv = process.env): TestRedisMode {
  const mode = env.REACH_TEST_REDIS || 'standalone';
  if (mode !== 'standalone' && mode !== 'cluster')
    throw new Error(`REACH_TEST_REDIS must be standalone or cluster, got "${mode}"`);
  return mode;
}

/** The Redis Cluster a test run shares. */
export interface TestCluster {
  /** `host:port,…` for `REDIS_CLUSTER_NODES`. */
  seeds: string;
  /** `redis://` + the first seed: the scheme (and credentials) for `REDIS_URL` beside the seeds. */
  url: string;
  /** The cluster when this run started it; undefined for one given by `REDIS_CLUSTER_NODES`. */
  local?: LocalCluster;
  /** Stops only a cluster this call started. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The cluster for a run: the one `REDIS_CLUSTER_NODES` names when set, else a local 3-master
 * cluster (`startLocalCluster`: AOF with `appendfsync always`, in a temp folder).
 */
export async function startTestCluster(env: NodeJS.ProcessEnv = process.env): Promise<TestCluster> {
  const given = env.REDIS_CLUSTER_NODES || undefined;
  if (given) {
    const first = given.split(',')[0]?.trim() ?? '';
    return { seeds: given, url: env.REDIS_URL || `redis://${first}`, stop: async () => {} };
  }
  const local = await startLocalCluster({ masters: 3 });
  return {
    seeds: local.seeds,
    url: `redis://${local.seeds.split(',')[0] ?? ''}`,
    local,
    stop: () => local.stop(),
  };
}
