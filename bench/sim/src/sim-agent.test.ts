import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.ts';
import { SimAgent } from './sim-agent.ts';

const agent = (speed: number, max: number, parallel: number) =>
  new SimAgent(
    { agent_id: 'a', speed, max_concurrency: max, parallel_slots: parallel },
    0,
    Infinity,
  );

describe('SimAgent', () => {
  it('runs a task in work / speed while it has parallel slots free', () => {
    const a = agent(2, 4, 4);
    a.start(0, 10, 0);
    a.start(1, 30, 0);
    expect(a.nextCompletionAt(0)).toBe(5);
    expect(a.complete(5)).toBe(0);
    expect(a.nextCompletionAt(5)).toBe(15);
  });

  it('shares its speed past its parallel slots', () => {
    // One parallel slot, two tasks of 10 ms: each runs at half speed, both end at 20 ms.
    const a = agent(1, 2, 1);
    a.start(0, 10, 0);
    a.start(1, 10, 0);
    expect(a.nextCompletionAt(0)).toBe(20);
    a.complete(20);
    expect(a.nextCompletionAt(20)).toBe(20);
    // A task joining halfway: the first has 5 ms of work left at half speed → ends at 15.
    const b = agent(1, 2, 1);
    b.start(0, 10, 0);
    b.start(1, 100, 5);
    expect(b.nextCompletionAt(5)).toBe(15);
  });

  it('refuses a task past max_concurrency', () => {
    const a = agent(1, 1, 1);
    a.start(0, 10, 0);
    expect(a.full).toBe(true);
    expect(() => a.start(1, 10, 0)).toThrow(/would run 2 > 1/);
  });
});

describe('EventQueue', () => {
  it('pops by time, and in push order at equal times', () => {
    const q = new EventQueue<{ at: number; name: string }>();
    for (const [at, name] of [
      [5, 'e'],
      [1, 'a'],
      [3, 'c1'],
      [3, 'c2'],
      [2, 'b'],
      [3, 'c3'],
    ] as const)
      q.push({ at, name });
    const out: string[] = [];
    for (let e = q.pop(); e; e = q.pop()) out.push(e.name);
    expect(out).toEqual(['a', 'b', 'c1', 'c2', 'c3', 'e']);
    expect(q.peekTime()).toBe(Infinity);
  });
});
