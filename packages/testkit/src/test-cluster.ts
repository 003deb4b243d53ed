import { connect } from 'node:net';
import { startLocalCluster, waitFor, type LocalCluster } from '@agent-reach/process-kit';

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

/** True when a TCP connection to `host:port` opens within 2 s. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}

/**
 * Resolves once one of `seeds` (`host:port,…`) accepts a connection; throws naming the variable
 * and its value after `timeoutMs`, so a run against a cluster that is not there fails at once.
 */
async function anySeedAccepts(seeds: string, timeoutMs: number): Promise<void> {
  const nodes = seeds.split(',').map((s) => {
    const at = s.trim().lastIndexOf(':');
    return {
      host: s
        .trim()
        .slice(0, at)
        .replace(/^\[|\]$/g, ''),
      port: Number(s.trim().slice(at + 1)),
    };
  });
  await waitFor(
    async () => (await Promise.all(nodes.map((n) => accepts(n.host, n.port)))).some(Boolean),
    {
      timeoutMs,
      intervalMs: 200,
      message: `REDIS_CLUSTER_NODES=${seeds}: no seed node accepts a connection`,
    },
  );
}

/**
 * The cluster for a run: the one `REDIS_CLUSTER_NODES` names when set, else a local 3-master
 * cluster (`startLocalCluster`: AOF with `appendfsync always`, in a temp folder).
 * @throws naming REDIS_CLUSTER_NODES when none of its seeds accepts a connection within 10 s.
 */
export async function startTestCluster(env: NodeJS.ProcessEnv = process.env): Promise<TestCluster> {
  const given = env.REDIS_CLUSTER_NODES || undefined;
  if (given) {
    const first = given.split(',')[0]?.trim() ?? '';
    await anySeedAccepts(given, 10_000);
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
