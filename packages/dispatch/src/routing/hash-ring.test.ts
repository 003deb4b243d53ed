import { describe, expect, it } from 'vitest';
import { HashRing } from './hash-ring.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `agent-${i}`);
const tasks = Array.from({ length: 20000 }, (_, i) => `task-${i}`);
/** A ring's nodes as plain arrays (points, owner indexes), to compare two rings. */
const nodesOf = (ring: HashRing) => {
  const { points, owners } = ring.nodes();
  return [[...points], [...owners]];
};

describe('HashRing', () => {
  it('gives the same owner to the same task_id every time', () => {
    const ring = new HashRing(ids(8));
    const all = new Set(ids(8));
    const first = tasks.slice(0, 100).map((t) => ring.order(t, all)[0]);
    const again = tasks.slice(0, 100).map((t) => new HashRing(ids(8)).order(t, all)[0]);
    expect(again).toEqual(first);
  });

  it('spreads task_ids over agents roughly evenly', () => {
    const n = 10;
    const ring = new HashRing(ids(n));
    const all = new Set(ids(n));
    const counts = new Map<string, number>();
    for (const t of tasks) {
      const owner = ring.order(t, all)[0] as string;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    const values = [...counts.values()];
    expect(values).toHaveLength(n);
    expect(Math.max(...values) / Math.min(...values)).toBeLessThan(1.6);
  });

  it('moves only about 1/(N+1) of task_ids when one agent joins N', () => {
    const n = 10;
    const before = new HashRing(ids(n));
    const after = new HashRing(ids(n + 1));
    const beforeSet = new Set(ids(n));
    const afterSet = new Set(ids(n + 1));
    let moved = 0;
    for (const t of tasks)
      if (before.order(t, beforeSet)[0] !== after.order(t, afterSet)[0]) moved++;
    const share = moved / tasks.length;
    // Expected 1/11 ≈ 0.091; every moved task must have moved to the new agent.
    expect(share).toBeGreaterThan(0.05);
    expect(share).toBeLessThan(0.14);
    for (const t of tasks.slice(0, 2000)) {
      const a = before.order(t, beforeSet)[0];
      const b = after.order(t, afterSet)[0];
      if (a !== b) expect(b).toBe(`agent-${n}`);
    }
  });

  it('orders only the agents asked about, each once', () => {
    const ring = new HashRing(ids(5));
    const among = new Set(['agent-1', 'agent-3']);
    const order = ring.order('task-x', among);
    expect(order.sort()).toEqual(['agent-1', 'agent-3']);
    expect(ring.order('task-x', new Set())).toEqual([]);
    expect(new HashRing([]).order('task-x', among)).toEqual([]);
  });

  it('is a function of the set of ids: order and repeats do not matter', () => {
    const a = new HashRing(ids(30));
    const b = new HashRing([...ids(30)].reverse().concat(ids(5)));
    const all = new Set(ids(30));
    expect(b.size).toBe(30);
    for (const t of tasks.slice(0, 200)) expect(b.order(t, all)).toEqual(a.order(t, all));
  });

  it('stops a walk once it has the first `limit` agents, the prefix of the full order', () => {
    const ring = new HashRing(ids(50));
    const among = new Set(ids(50).filter((_, i) => i % 3 !== 0));
    for (const t of tasks.slice(0, 200)) {
      const full = ring.order(t, among);
      expect(full).toHaveLength(among.size);
      for (const k of [1, 2, 3, 10]) expect(ring.order(t, among, k)).toEqual(full.slice(0, k));
    }
  });

  it('says whether it is over exactly a given set of ids', () => {
    const ring = new HashRing(['a', 'b', 'c']);
    expect(ring.hasExactly(['c', 'a', 'b'])).toBe(true);
    expect(ring.hasExactly(['a', 'b', 'c', 'a'])).toBe(true);
    expect(ring.hasExactly(['a', 'b'])).toBe(false);
    expect(ring.hasExactly(['a', 'b', 'b'])).toBe(false);
    expect(ring.hasExactly(['a', 'b', 'c', 'd'])).toBe(false);
    expect(new HashRing([]).hasExactly([])).toBe(true);
  });

  it('looks a list’s ids up once, and again when the list changed', () => {
    const ring = new HashRing(['a', 'b', 'c']);
    const list = [{ agent_id: 'c' }, { agent_id: 'x' }, { agent_id: 'a' }];
    const owners = ring.ownersOf(list);
    expect([...owners]).toEqual([2, -1, 0]);
    expect(ring.ownersOf(list)).toBe(owners);
    list[1] = { agent_id: 'b' };
    expect([...ring.ownersOf(list)]).toEqual([2, 1, 0]);
  });

  it('merged from the ring of a nearby set, is the ring built from nothing', () => {
    let state = 7;
    const rand = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let round = 0; round < 40; round++) {
      const before = ids(60 + Math.floor(rand() * 200)).filter(() => rand() > 0.1);
      // A few leave, a few join (some of them sorting first or last), the rest stay.
      const after = before
        .filter(() => rand() > 0.03)
        .concat(
          Array.from(
            { length: Math.floor(rand() * 4) },
            (_, i) => `${rand() < 0.5 ? 'a' : 'z'}-new-${round}-${i}`,
          ),
        );
      const previous = new HashRing(before);
      const merged = new HashRing(after, undefined, previous);
      const fresh = new HashRing(after);
      expect([...merged.ids]).toEqual([...fresh.ids]);
      expect(nodesOf(merged)).toEqual(nodesOf(fresh));
      const all = new Set(after);
      for (const t of tasks.slice(0, 50)) expect(merged.order(t, all)).toEqual(fresh.order(t, all));
    }
  });

  it('is built from nothing when too much changed to merge, with the same result', () => {
    const previous = new HashRing(ids(10));
    const after = ids(40).slice(20);
    expect(nodesOf(new HashRing(after, undefined, previous))).toEqual(nodesOf(new HashRing(after)));
    expect(nodesOf(new HashRing([], undefined, previous))).toEqual([[], []]);
    expect(nodesOf(new HashRing(ids(5), 16, previous))).toEqual(nodesOf(new HashRing(ids(5), 16)));
  });
});
