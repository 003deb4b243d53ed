import { describe, expect, it } from 'vitest';
import { keySlot } from '@agent-reach/service-kit/redis';
import { ReadPlanner, readLanes, type ReadCall } from './read-plan.ts';
import type { StreamEntry } from './redis-util.ts';

const entries = (stream: string, ...ids: string[]): StreamEntry[] =>
  ids.map((id) => ({ stream, id, fields: [] }));

/** The most entries a call can return: COUNT applies to each stream. */
const most = (call: ReadCall): number => call.count * call.streams.length;

/** A planner past its history for these streams (its last call, with a slot per stream, starts no sweep). */
function live(streams: readonly string[]): ReadPlanner {
  const plan = new ReadPlanner();
  for (;;) {
    const call = plan.next(streams, streams.length);
    if (!call.history) return plan;
    plan.done(call, []);
  }
}

describe('ReadPlanner', () => {
  it('re-reads each stream’s own pending entries first, one stream per call, without BLOCK', () => {
    const plan = new ReadPlanner();
    const streams = ['inbox', 'pool:a'];
    expect(plan.next(streams, 3)).toEqual({
      streams: ['inbox'],
      ids: ['0'],
      count: 3,
      block: false,
      history: true,
    });
    expect(
      plan.done(
        { streams: ['inbox'], ids: ['0'], count: 3, block: false, history: true },
        entries('inbox', '5-0', '7-0'),
      ),
    ).toEqual({ resumed: 2 });
    const again = plan.next(streams, 1);
    expect(again).toMatchObject({ streams: ['inbox'], ids: ['7-0'], count: 1, history: true });
    plan.done(again, []);
    const pool = plan.next(streams, 1);
    expect(pool).toMatchObject({ streams: ['pool:a'], ids: ['0'], history: true });
    plan.done(pool, []);
    expect(plan.next(streams, 2)).toEqual({
      streams,
      ids: ['>', '>'],
      count: 1,
      block: true,
      history: false,
    });
  });

  it('with free ≥ streams: one blocking call over all of them, COUNT ⌊free / streams⌋', () => {
    const streams = ['inbox', 'p1', 'p2'];
    const plan = live(streams);
    expect(plan.next(streams, 3)).toMatchObject({ streams, count: 1, block: true });
    expect(plan.next(streams, 8)).toMatchObject({ streams, count: 2, block: true });
    expect(live(['inbox']).next(['inbox'], 5)).toEqual({
      streams: ['inbox'],
      ids: ['>'],
      count: 5,
      block: true,
      history: false,
    });
  });

  it('with free < streams: sweeps every stream without BLOCK, then blocks on `free` of them', () => {
    const streams = ['inbox', 'p1', 'p2'];
    const plan = live(streams);
    const sweep = [plan.next(streams, 2), plan.next(streams, 2), plan.next(streams, 2)];
    for (const call of sweep) plan.done(call, []);
    expect(sweep.map((c) => [c.streams, c.count, c.block])).toEqual([
      [['inbox'], 2, false],
      [['p1'], 2, false],
      [['p2'], 2, false],
    ]);
    const block = plan.next(streams, 2);
    expect(block).toEqual({
      streams: ['p1', 'p2'],
      ids: ['>', '>'],
      count: 1,
      block: true,
      history: false,
    });
    plan.done(block, []);
    // After the BLOCK, a new sweep starts one stream further on, so no stream always goes first.
    expect(plan.next(streams, 2)).toMatchObject({ streams: ['p1'], block: false });
  });

  it('sweeps streams of a higher rank first (pool priority bands), rotating within a rank', () => {
    const streams = ['inbox', 'cap', 'cap:b1', 'cap:b2'];
    const rank = (s: string) =>
      s === 'inbox' ? 3 : s.endsWith(':b2') ? 2 : s.endsWith(':b1') ? 1 : 0;
    const plan = live(streams);
    const sweep = () => {
      const order: string[] = [];
      for (let i = 0; i < streams.length; i++) {
        const call = plan.next(streams, 1, rank);
        order.push(call.streams[0] ?? '');
        plan.done(call, []);
      }
      plan.done(plan.next(streams, 1, rank), []);
      return order;
    };
    // Whichever stream the rotation starts at, the bands come highest first.
    expect(sweep()).toEqual(['inbox', 'cap:b2', 'cap:b1', 'cap']);
    expect(sweep()).toEqual(['inbox', 'cap:b2', 'cap:b1', 'cap']);
  });

  it('blocks on the streams that gave entries most recently', () => {
    const streams = ['inbox', 'p1', 'p2', 'p3'];
    const plan = live(streams);
    // A sweep finds work in p3 only, the next finds nothing: the BLOCK waits on p3 first.
    const sweep = () => {
      for (;;) {
        const call = plan.next(streams, 1);
        if (call.block) return call;
        plan.done(call, call.streams[0] === 'p3' && !found ? entries('p3', '1-0') : []);
        if (call.streams[0] === 'p3') found = true;
      }
    };
    let found = false;
    const block = sweep();
    expect(block).toMatchObject({ streams: ['p3'], count: 1, block: true });
    plan.done(block, entries('p2', '2-0'));
    // p2 gave the last entry: it leads, then p3.
    const sweepAgain = [];
    for (;;) {
      const call = plan.next(streams, 2);
      if (call.block) {
        sweepAgain.push(call);
        break;
      }
      plan.done(call, []);
    }
    expect(sweepAgain[0]).toMatchObject({ streams: ['p2', 'p3'], count: 1, block: true });
  });

  it('starts a new sweep instead of blocking when the last one found work', () => {
    const streams = ['inbox', 'p1'];
    const plan = live(streams);
    const first = plan.next(streams, 1);
    plan.done(first, entries(first.streams[0] ?? '', '1-0'));
    const second = plan.next(streams, 1);
    plan.done(second, []);
    expect(plan.next(streams, 1)).toMatchObject({ block: false, count: 1 });
  });

  it('never plans a call that could return more entries than free slots', () => {
    const streams = ['inbox', 'p1', 'p2', 'p3', 'p4'];
    const plan = new ReadPlanner();
    for (let i = 0; i < 500; i++) {
      const free = 1 + ((i * 7) % 9);
      const call = plan.next(streams, free);
      expect(most(call)).toBeLessThanOrEqual(free);
      plan.done(call, i % 3 === 0 ? entries(call.streams[0] ?? '', `${i}-0`) : []);
    }
  });

  it('reads the history of a stream that appears later, and forgets one that is gone', () => {
    const plan = live(['inbox']);
    expect(plan.next(['inbox', 'p1'], 4)).toMatchObject({
      streams: ['p1'],
      ids: ['0'],
      history: true,
    });
    expect(plan.next(['inbox'], 4)).toMatchObject({
      streams: ['inbox'],
      ids: ['>'],
      history: false,
    });
    expect(plan.state.history.size).toBe(0);
  });
});

describe('readLanes', () => {
  it('is one lane with every stream on one server', () => {
    expect(readLanes(['inbox', 'pool:a', 'pool:b'], undefined)).toEqual([
      { key: 'all', streams: ['inbox', 'pool:a', 'pool:b'] },
    ]);
  });

  it('is one lane per slot on a Cluster, streams of one slot together, inbox first', () => {
    const streams = ['r:{a:x}:inbox', 'r:{pool:a}', 'r:{pool:b}', 'r:{pool:a}:p9'];
    const lanes = readLanes(streams, keySlot);
    expect(lanes.map((l) => l.streams)).toEqual([
      ['r:{a:x}:inbox'],
      ['r:{pool:a}', 'r:{pool:a}:p9'],
      ['r:{pool:b}'],
    ]);
    expect(lanes[1]?.key).toBe(`slot:${keySlot('pool:a')}`);
  });
});
