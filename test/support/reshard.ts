/**
 * Moves one hash slot of a Redis Cluster from its master to another, the way
 * `redis-cli --cluster reshard` does it, but for a slot of our choosing and slowly: IMPORTING on
 * the target, MIGRATING on the source, then MIGRATE one key at a time with a pause between, so
 * clients meet the half-moved slot (ASK for keys already moved, TRYAGAIN for a script whose keys
 * are split) before SETSLOT … NODE ends it (MOVED from then on).
 */
import { Redis } from 'ioredis';
import type { ClusterNodeState } from '@agent-reach/testkit';

/** What a {@link migrateSlot} did. */
export interface SlotMove {
  slot: number;
  from: number;
  to: number;
  /** Keys moved by MIGRATE (a key written again on the source while migrating moves again). */
  keys: number;
  startedAt: number;
  endedAt: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Moves `slot` from `from` to `to` (masters of one cluster; `masters` are all of them, told the
 * new owner at the end). `pauseMs` is kept between keys so the slot stays half-moved a while.
 */
export async function migrateSlot(
  slot: number,
  from: ClusterNodeState,
  to: ClusterNodeState,
  masters: readonly ClusterNodeState[],
  pauseMs = 150,
): Promise<SlotMove> {
  const open = (n: ClusterNodeState) => new Redis(n.port, n.host, { maxRetriesPerRequest: 2 });
  const src = open(from);
  const dst = open(to);
  const startedAt = Date.now();
  let keys = 0;
  try {
    await dst.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
    await src.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
    for (;;) {
      const batch = (await src.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[];
      if (batch.length === 0) break;
      // Pacing, not waiting for a condition: the slot stays half-moved while tasks flow.
      await sleep(pauseMs);
      const reply = await src.call('MIGRATE', to.host, to.port, '', 0, 5000, 'KEYS', ...batch);
      if (reply === 'OK') keys += batch.length;
    }
    // The new owner first, then the old one (its clients get MOVED), then everyone else.
    const others = masters.filter((m) => m.id !== from.id && m.id !== to.id);
    for (const n of [to, from, ...others]) {
      const conn = n.id === to.id ? dst : n.id === from.id ? src : open(n);
      await conn.call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
      if (conn !== src && conn !== dst) conn.disconnect();
    }
  } finally {
    src.disconnect();
    dst.disconnect();
  }
  return { slot, from: from.port, to: to.port, keys, startedAt, endedAt: Date.now() };
}

/** The master serving `slot` in `view`. */
export function ownerOf(view: readonly ClusterNodeState[], slot: number): ClusterNodeState {
  const owner = view.find(
    (n) => n.role === 'master' && n.slots.some(([a, b]) => slot >= a && slot <= b),
  );
  if (!owner) throw new Error(`no master serves slot ${slot}`);
  return owner;
}
