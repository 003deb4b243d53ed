import { describe, expect, it } from 'vitest';
import { instanceIdOf, ownerOf } from './ownership.ts';

const agents = Array.from({ length: 3000 }, (_, i) => `agent-${i}`);

describe('ownerOf', () => {
  it('spreads agents over the relays and agrees whatever the order of the list', () => {
    const relays = ['r-a', 'r-b', 'r-c'];
    const counts = new Map<string, number>();
    for (const a of agents) {
      const owner = ownerOf(a, relays) as string;
      expect(ownerOf(a, [...relays].reverse())).toBe(owner);
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const r of relays) expect(counts.get(r)).toBeGreaterThan(800);
  });

  it('moves only the leaving relay’s agents', () => {
    const before = agents.map((a) => ownerOf(a, ['r-a', 'r-b', 'r-c']));
    const after = agents.map((a) => ownerOf(a, ['r-a', 'r-c']));
    agents.forEach((_, i) => {
      if (before[i] !== 'r-b') expect(after[i]).toBe(before[i]);
      else expect(['r-a', 'r-c']).toContain(after[i]);
    });
  });

  it('has no owner without relays', () => {
    expect(ownerOf('x', [])).toBeUndefined();
  });
});

describe('instanceIdOf', () => {
  it('is stable and fits the id pattern', () => {
    expect(instanceIdOf('relay-1', 'a')).toBe('relay-1.a');
    const long = instanceIdOf('relay-1', 'x'.repeat(128));
    expect(long.length).toBeLessThanOrEqual(128);
    expect(long).toMatch(/^[A-Za-z0-9_.:-]{1,128}$/);
    expect(instanceIdOf('relay-1', 'x'.repeat(128))).toBe(long);
  });
});
