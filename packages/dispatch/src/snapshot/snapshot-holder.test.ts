import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { reachKeys, type SnapshotAgent } from '@agent-reach/protocol';
import { HashRing } from '../routing/hash-ring.ts';
import { SnapshotHolder } from './snapshot-holder.ts';

function agent(id: string, capabilities: string[], inflight = 0): SnapshotAgent {
  return {
    agent_id: id,
    instance_id: `${id}-i`,
    epoch: 1,
    status: 'HEALTHY',
    capabilities,
    max_concurrency: 4,
    inflight,
    region: '',
    channel: 'push',
    lease_age_ms: 0,
  };
}

/** A ring's nodes as plain arrays (points, owner indexes), to compare two rings. */
const nodesOf = (ring: HashRing) => {
  const { points, owners } = ring.nodes();
  return [[...points], [...owners]];
};

/**
 * A holder over an in-memory stand-in for the three keys it reads: the snapshot (`write` stores
 * the next full one), the version counter, and the delta stream (`delta` adds the next entry).
 */
function holder() {
  const keys = reachKeys('t');
  let version = 0;
  let stored: string | null = null;
  const deltas: [string, string[]][] = [];
  const redis = {
    get: (key: string) =>
      Promise.resolve(key === keys.snapshotVersion() ? String(version) : stored),
    xrange: (_key: string, from: string, _to: string, _count: string, n: number) => {
      const first = Number(from.split('-')[0]);
      return Promise.resolve(
        deltas.filter(([id]) => Number(id.split('-')[0]) >= first).slice(0, n),
      );
    },
  } as unknown as Redis;
  const subscriber = {} as Redis;
  const logger = { child: () => logger, warn: () => undefined } as unknown as Logger;
  const h = new SnapshotHolder({
    redis,
    subscriber,
    keys: reachKeys('t'),
    intervalMs: 60_000,
    logger,
  });
  const write = async (agents: SnapshotAgent[]) => {
    stored = JSON.stringify({ version: ++version, written_at: 0, agents });
    await h.reload();
  };
  /** Adds a delta; with `announce`, the holder hears of it at once. */
  const delta = async (agents: SnapshotAgent[], removed: string[] = [], announce = true) => {
    deltas.push([
      `${++version}-0`,
      ['agents', JSON.stringify(agents), 'removed', JSON.stringify(removed), 'written_at', '0'],
    ]);
    if (announce) await h.reload();
  };
  /** Drops the deltas up to `upTo` (the stream trimmed). */
  const trim = (upTo: number) => {
    while (deltas.length > 0 && Number(deltas[0]![0].split('-')[0]) <= upTo) deltas.shift();
  };
  return { h, write, delta, trim };
}

describe('SnapshotHolder.ringFor', () => {
  it('keeps a capability’s ring across reloads while its set of agents is the same', async () => {
    const { h, write } = holder();
    await write([agent('a', ['x', 'y']), agent('b', ['x'])]);
    const x = h.ringFor('x');
    const y = h.ringFor('y');
    // New loads and a new order, same members.
    await write([agent('b', ['x'], 3), agent('a', ['x', 'y'], 1)]);
    expect(h.info().version).toBe(2);
    expect(h.ringFor('x')).toBe(x);
    expect(h.ringFor('y')).toBe(y);
  });

  it('rebuilds the ring of a capability whose membership changed, and only that one', async () => {
    const { h, write } = holder();
    await write([agent('a', ['x', 'y']), agent('b', ['x'])]);
    const x = h.ringFor('x');
    const y = h.ringFor('y');
    await write([agent('a', ['x', 'y']), agent('c', ['x'])]);
    const x2 = h.ringFor('x');
    expect(x2).not.toBe(x);
    expect([...x2.ids]).toEqual(['a', 'c']);
    expect(h.ringFor('y')).toBe(y);
    // An agent leaving is a change too, and a capability nobody serves any more has an empty ring.
    await write([agent('a', ['x'])]);
    expect([...h.ringFor('x').ids]).toEqual(['a']);
    expect(h.ringFor('y').size).toBe(0);
  });

  it('gives a changed capability the ring a build from nothing gives, merged from its former one', async () => {
    const { h, write } = holder();
    const many = Array.from({ length: 50 }, (_, i) => agent(`w${i}`, ['x']));
    await write(many);
    h.ringFor('x');
    // Two snapshots in a row change the membership before the ring is used again.
    await write([...many.slice(1), agent('zz-late', ['x'])]);
    await write([...many.slice(2), agent('zz-late', ['x']), agent('zz-later', ['x'])]);
    const ids = [...many.slice(2).map((a) => a.agent_id), 'zz-late', 'zz-later'];
    expect(nodesOf(h.ringFor('x'))).toEqual(nodesOf(new HashRing(ids)));
  });

  it('does not mistake a repeated agent for the same membership', async () => {
    const { h, write } = holder();
    await write([agent('a', ['x']), agent('b', ['x'])]);
    const x = h.ringFor('x');
    await write([agent('a', ['x', 'x'])]);
    expect(h.ringFor('x')).not.toBe(x);
    expect([...h.ringFor('x').ids]).toEqual(['a']);
  });
});

describe('SnapshotHolder.inflightOf', () => {
  afterEach(() => vi.useRealTimers());

  it('trusts a fresh live count, and a stale one only while it is not above the snapshot’s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { h, write } = holder();
    await write([agent('a', ['x'], 2), agent('b', ['x'], 2)]);
    const a = h.agent('a')!;
    const b = h.agent('b')!;
    h.noteInflight('a', 4);
    h.noteInflight('b', 1);
    expect([h.inflightOf(a), h.inflightOf(b)]).toEqual([4, 1]);
    vi.setSystemTime(Date.now() + 300);
    expect([h.inflightOf(a), h.inflightOf(b)]).toEqual([2, 1]);
    h.reserve('a');
    expect(h.inflightOf(a)).toBe(3);
  });

  it('carries reservations in flight over a reload, on the new snapshot’s count, and drops the rest', async () => {
    const { h, write } = holder();
    await write([agent('a', ['x'], 1), agent('b', ['x'], 1)]);
    h.noteInflight('a', 3);
    h.reserve('b');
    h.reserve('gone');
    await write([agent('a', ['x'], 2), agent('b', ['x'], 2), agent('gone', ['x'], 5)]);
    expect(h.inflightOf(h.agent('a')!)).toBe(2);
    expect(h.inflightOf(h.agent('b')!)).toBe(3);
    // Reserved while not in the snapshot: counted once it appears.
    expect(h.inflightOf(h.agent('gone')!)).toBe(6);
    h.settle('b', 4);
    expect(h.inflightOf(h.agent('b')!)).toBe(4);
  });

  it('finds a count by the agent’s place in its capability’s list, or by id when the place does not match', async () => {
    const { h, write } = holder();
    await write([agent('a', ['x'], 1), agent('b', ['x', 'y'], 1)]);
    h.noteInflight('b', 3);
    const xs = h.agentsFor('x');
    const ys = h.agentsFor('y');
    const old = h.agent('b')!;
    expect(xs.map((a, i) => h.inflightOf(a, Date.now(), i, xs))).toEqual([1, 3]);
    expect(h.inflightOf(ys[0]!, Date.now(), 0, ys)).toBe(3);
    // A wrong place, or an agent object of an older snapshot, is looked up by id.
    expect(h.inflightOf(xs[1]!, Date.now(), 0, xs)).toBe(3);
    await write([agent('a', ['x'], 1), agent('b', ['x', 'y'], 2)]);
    h.noteInflight('b', 0);
    expect(h.inflightOf(old, Date.now(), 1, xs)).toBe(0);
  });
});

describe('SnapshotHolder, between announcements', () => {
  afterEach(() => vi.useRealTimers());

  it('reads the snapshot again only when the version counter moved', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const keys = reachKeys('t');
    let version = 1;
    let snapshotReads = 0;
    const snapshotOf = (v: number) =>
      JSON.stringify({ version: v, written_at: 0, agents: [agent(`a${v}`, ['x'])] });
    const redis = {
      get: (key: string) => {
        if (key === keys.snapshotVersion()) return Promise.resolve(String(version));
        snapshotReads++;
        return Promise.resolve(snapshotOf(version));
      },
      xrange: () => Promise.resolve([]),
    } as unknown as Redis;
    const subscriber = {
      on: () => subscriber,
      subscribe: () => Promise.resolve(1),
      disconnect: () => undefined,
    } as unknown as Redis;
    const logger = { child: () => logger, warn: () => undefined } as unknown as Logger;
    const h = new SnapshotHolder({ redis, subscriber, keys, intervalMs: 5000, logger });
    await h.start();
    expect(snapshotReads).toBe(1);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(snapshotReads).toBe(1);
    expect(h.info().version).toBe(1);
    // An announcement lost: the next check finds the new version and reads it.
    version = 2;
    await vi.advanceTimersByTimeAsync(5000);
    expect(snapshotReads).toBe(2);
    expect(h.info().version).toBe(2);
    expect(h.agent('a2')).toBeDefined();
    await h.close();
  });
});

describe('SnapshotHolder, deltas', () => {
  it('applies the deltas after the version it holds: changed agents, new ones, removed ones', async () => {
    const { h, write, delta } = holder();
    await write([agent('a', ['x', 'y']), agent('b', ['x'])]);
    const x = h.ringFor('x');
    const ys = h.agentsFor('y');
    await delta([{ ...agent('b', ['x']), status: 'SUSPECT' }]);
    expect(h.info()).toMatchObject({ version: 2, agents: 2, full_loads: 1, deltas: 1 });
    expect(h.agent('b')?.status).toBe('SUSPECT');
    expect(h.agentsFor('x').map((a) => [a.agent_id, a.status])).toEqual([
      ['a', 'HEALTHY'],
      ['b', 'SUSPECT'],
    ]);
    // A status change touches no ring, and no list of a capability the agent does not serve.
    expect(h.ringFor('x')).toBe(x);
    expect(h.agentsFor('y')).toBe(ys);
    await delta([agent('c', ['x', 'z'])], ['a']);
    expect(h.agent('a')).toBeUndefined();
    expect(h.agentsFor('x').map((a) => a.agent_id)).toEqual(['b', 'c']);
    expect(h.agentsFor('y')).toEqual([]);
    expect([...h.capabilities()].sort()).toEqual(['x', 'z']);
    expect([...h.ringFor('x').ids].sort()).toEqual(['b', 'c']);
    expect(h.info()).toMatchObject({ version: 3, agents: 2, full_loads: 1, deltas: 2 });
  });

  it('catches up on deltas it was not told of, in order', async () => {
    const { h, write, delta } = holder();
    await write([agent('a', ['x'])]);
    await delta([{ ...agent('a', ['x']), status: 'SUSPECT' }], [], false);
    await delta([{ ...agent('a', ['x']), status: 'OFFLINE' }], [], false);
    await h.reload();
    expect(h.agent('a')?.status).toBe('OFFLINE');
    expect(h.info()).toMatchObject({ version: 3, full_loads: 1, deltas: 2 });
  });

  it('loads the full snapshot where a version has no delta, then the deltas after it', async () => {
    const { h, write, delta, trim } = holder();
    await write([agent('a', ['x'])]);
    await delta([agent('b', ['x'])], [], false);
    trim(2);
    // The full snapshot 3 lacks what delta 4 adds; delta 2 was trimmed away.
    await write([agent('a', ['x']), agent('b', ['x'])]);
    await delta([agent('c', ['x'])]);
    expect(h.agentsFor('x').map((a) => a.agent_id)).toEqual(['a', 'b', 'c']);
    expect(h.info()).toMatchObject({ version: 4, full_loads: 2 });
  });

  it('keeps reservations in flight when a delta brings an agent’s count', async () => {
    const { h, write, delta } = holder();
    await write([agent('a', ['x'], 1), agent('b', ['x'], 1)]);
    h.reserve('a');
    h.noteInflight('b', 3);
    await delta([agent('a', ['x'], 2), agent('b', ['x'], 0)]);
    expect(h.inflightOf(h.agent('a')!)).toBe(3);
    expect(h.inflightOf(h.agent('b')!)).toBe(0);
    // An agent new since the snapshot is counted by id.
    await delta([agent('n', ['x'], 1)]);
    h.reserve('n');
    expect(h.inflightOf(h.agent('n')!)).toBe(2);
  });
});
