/**
 * What the failover test reads from the Redis Cluster: which master holds a key, who holds the
 * housekeeping lock, when a killed master's replica has taken over.
 */
import type { Cluster } from 'ioredis';
import type { LocalCluster } from '@agent-reach/testkit';

/** Port of the live master serving `key`'s slot, as the cluster reports it now. */
export async function masterPortOf(
  cluster: LocalCluster,
  redis: Cluster,
  key: string,
): Promise<number> {
  const slot = Number(await redis.cluster('KEYSLOT', key));
  const view = await cluster.topology();
  const master = view.find(
    (n) => n.role === 'master' && !n.failing && n.slots.some(([a, b]) => slot >= a && slot <= b),
  );
  if (!master) throw new Error(`no live master serves slot ${slot} of ${key}`);
  return master.port;
}

/**
 * True once a live master other than `deadPort` serves every slot `deadPort` held, and no node
 * in the view marks `deadPort` as anything but failed.
 */
export async function tookOver(
  cluster: LocalCluster,
  deadPort: number,
  slots: readonly [number, number][],
): Promise<boolean> {
  try {
    const view = await cluster.topology();
    return slots.every(([a]) =>
      view.some(
        (n) =>
          n.port !== deadPort &&
          n.role === 'master' &&
          !n.failing &&
          n.slots.some(([x, y]) => a >= x && a <= y),
      ),
    );
  } catch {
    return false;
  }
}

/** Slot ranges the master on `port` holds now. */
export async function slotsOf(cluster: LocalCluster, port: number): Promise<[number, number][]> {
  const node = (await cluster.topology()).find((n) => n.port === port);
  return node?.slots ?? [];
}
