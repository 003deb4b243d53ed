/**
 * The chaos test's own Redis, killed and restarted mid-run: a persistent redis-server (AOF,
 * appendfsync always) on the standalone leg, a 3-master Redis Cluster of its own on the cluster
 * leg, where one master — the one holding `victimKey` — is SIGKILLed and restarted from its AOF.
 */
import { startLocalCluster, startOwnRedis, testServices } from '@agent-reach/testkit';
import type { RedisTarget, TestRedis } from '../redis.ts';

/** A Redis the chaos test may kill. */
export interface ChaosRedis extends RedisTarget {
  /** What a kill takes down, for the progress lines. */
  readonly kind: 'redis-server' | 'cluster master';
  /**
   * SIGKILLs Redis (on a cluster, the master that holds `victimKey`'s slot, asked of `probe`)
   * and resolves once it has exited.
   */
  kill(probe: TestRedis, victimKey: string): Promise<void>;
  /** Starts what {@link kill} took down again, on the same port with its data. */
  restart(): Promise<void>;
  /** Stops everything and removes the data. */
  stop(): Promise<void>;
}

/** A persistent Redis of the test's own, of the leg's kind. */
export async function startChaosRedis(): Promise<ChaosRedis> {
  if (!testServices().redisClusterNodes) {
    const own = await startOwnRedis({ persistent: true });
    return {
      kind: 'redis-server',
      redisUrl: own.url,
      async kill() {
        own.kill('SIGKILL');
        await own.exited();
      },
      restart: () => own.restart(),
      stop: () => own.stop(),
    };
  }
  const cluster = await startLocalCluster({ masters: 3 });
  let killed: number | undefined;
  return {
    kind: 'cluster master',
    redisUrl: `redis://${cluster.seeds.split(',')[0] ?? ''}`,
    redisClusterNodes: cluster.seeds,
    async kill(probe, victimKey) {
      const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', victimKey));
      const owner = (await cluster.topology()).find(
        (n) => n.role === 'master' && n.slots.some(([a, b]) => slot >= a && slot <= b),
      );
      killed = owner?.port ?? cluster.nodes[0]!.port;
      await cluster.killNode(killed);
    },
    async restart() {
      if (killed !== undefined) await cluster.restartNode(killed);
      killed = undefined;
    },
    stop: () => cluster.stop(),
  };
}
