import type { Redis } from 'ioredis';
import { reachKeys } from '@agent-reach/protocol';
import type { ClusterNodeState } from '@agent-reach/process-kit';

/** A key every task touches that lives in one slot, and the master holding that slot. */
export interface HotKey {
  /** What the key is: `acks`, `acks shard 1`, `due`, `callback topic`. */
  what: string;
  key: string;
  slot: number;
  /** The master's name (`:<port>`), `?` when no master holds the slot. */
  master: string;
}

/** The master (`:<port>`) holding `slot`, from a `CLUSTER NODES` view; `?` when none does. */
export function masterOfSlot(view: readonly ClusterNodeState[], slot: number): string {
  const m = view.find(
    (n) => n.role === 'master' && n.slots.some(([from, to]) => slot >= from && slot <= to),
  );
  return m ? `:${m.port}` : '?';
}

/**
 * Where the keys that every task touches and that do not spread by agent or task live: each shard
 * of the acks stream and of the due set (`shards` of each, REACH_SHARDS) and the caller's callback
 * topic. A task's own keys (`{t:…}`) and an agent's (`{a:…}`) spread over the slots by themselves.
 */
export async function hotKeys(
  admin: Redis,
  view: readonly ClusterNodeState[],
  prefix: string,
  shards: number,
  callbackTopic: string,
): Promise<HotKey[]> {
  const keys = reachKeys(prefix, { shards: () => shards });
  const wanted: { what: string; key: string }[] = [];
  for (let i = 0; i < shards; i++) {
    const suffix = shards > 1 ? ` shard ${i}` : '';
    wanted.push({ what: `acks${suffix}`, key: keys.acks(i) });
    wanted.push({ what: `due${suffix}`, key: keys.due(i) });
  }
  wanted.push({ what: 'callback topic', key: keys.callback(callbackTopic) });
  const out: HotKey[] = [];
  for (const w of wanted) {
    const slot = Number(await admin.cluster('KEYSLOT', w.key));
    out.push({ ...w, slot, master: masterOfSlot(view, slot) });
  }
  return out;
}

/** `what → master` per master, e.g. `:7000 acks, callback topic; :7001 due`. */
export function hotKeyLine(keys: readonly HotKey[]): string {
  const by = new Map<string, string[]>();
  for (const k of keys) by.set(k.master, [...(by.get(k.master) ?? []), k.what]);
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([master, whats]) => `${master} ${whats.join(', ')}`)
    .join('; ');
}
