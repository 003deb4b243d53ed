import { HashRing } from '@agent-reach/dispatch';
import { describe, expect, it } from 'vitest';
import { equalAgents, keptShare, measureStickiness } from './stickiness.ts';

describe('keptShare', () => {
  it('counts the task_ids that keep their agent (hand-checked)', () => {
    const before: Record<string, string> = { t1: 'a', t2: 'b', t3: 'a', t4: 'b' };
    // One agent c joins and takes t3 only: 3 of 4 keep their agent.
    const after: Record<string, string> = { t1: 'a', t2: 'b', t3: 'c', t4: 'b' };
    expect(
      keptShare(
        ['t1', 't2', 't3', 't4'],
        (t) => before[t],
        (t) => after[t],
      ),
    ).toBe(0.75);
    expect(
      keptShare(
        [],
        (t) => t,
        (t) => t,
      ),
    ).toBeNaN();
  });
});

describe('measureStickiness', () => {
  const ids = Array.from({ length: 4_000 }, (_, i) => `task-1-${i}`);

  it('for 1 → 2 agents, keeps exactly the tasks the ring still gives the first agent', () => {
    // Before, every task goes to the only agent; after, it stays when the ring's first owner
    // among the two is still that agent.
    const two = equalAgents(2).map((a) => a.agent_id);
    const ring = new HashRing(two);
    const stay = ids.filter((t) => ring.order(t, new Set(two))[0] === two[0]).length / ids.length;
    const figure = measureStickiness(1, ids);
    expect(figure.kept).toBe(stay);
    expect(figure.ideal).toBe(0.5);
  });

  it('meets 0.97 × N/(N+1) for N = 5 and 10', () => {
    for (const n of [5, 10]) {
      const figure = measureStickiness(n, ids);
      expect(figure.target).toBeCloseTo((0.97 * n) / (n + 1), 12);
      expect(figure.pass).toBe(true);
      expect(figure.kept).toBeLessThanOrEqual(1);
    }
  });
});
