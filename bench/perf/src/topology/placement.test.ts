import { describe, expect, it } from 'vitest';
import type { ClusterNodeState } from '@agent-reach/process-kit';
import { hotKeyLine, masterOfSlot } from './placement.ts';

const node = (
  port: number,
  slots: Array<[number, number]>,
  role: 'master' | 'replica' = 'master',
) =>
  ({ host: '127.0.0.1', port, role, id: String(port), failing: false, slots }) as ClusterNodeState;

const view = [
  node(7000, [[0, 5460]]),
  node(7001, [[5461, 10922]]),
  node(7002, [[10923, 16383]]),
  node(7003, [], 'replica'),
];

describe('where one-slot keys live', () => {
  it('finds the master holding a slot', () => {
    expect(masterOfSlot(view, 0)).toBe(':7000');
    expect(masterOfSlot(view, 5461)).toBe(':7001');
    expect(masterOfSlot(view, 16383)).toBe(':7002');
    expect(masterOfSlot(view.slice(0, 1), 9000)).toBe('?');
  });

  it('groups the keys by master', () => {
    expect(
      hotKeyLine([
        { what: 'acks', key: 'p:acks', slot: 1, master: ':7001' },
        { what: 'due', key: 'p:due', slot: 2, master: ':7000' },
        { what: 'callback topic', key: 'p:{cb:t}', slot: 3, master: ':7001' },
      ]),
    ).toBe(':7000 due; :7001 acks, callback topic');
  });
});
