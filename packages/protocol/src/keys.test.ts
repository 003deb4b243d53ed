import { describe, expect, it } from 'vitest';
import { followUpMember, dueKind, dueTaskId, reachKeys, shardOf, watchdogMember } from './keys.ts';

describe('shards of the acks stream and the due set', () => {
  it('are the single acks and due keys with one shard, whatever the id', () => {
    const keys = reachKeys('p');
    expect(keys.shards()).toBe(1);
    expect(keys.acksOf('agent-1')).toBe('p:acks');
    expect(keys.dueOf('task-1')).toBe('p:due');
    expect([keys.acks(), keys.due()]).toEqual(['p:acks', 'p:due']);
  });

  it('spread ids over hash-tagged keys with several, the same shard in every process', () => {
    let shards = 4;
    const keys = reachKeys('p', () => shards);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(keys.dueOf(`task-${i}`));
    expect([...seen].sort()).toEqual(['p:due', 'p:{due:1}', 'p:{due:2}', 'p:{due:3}']);
    expect(keys.acksOf('agent-7')).toBe(keys.acks(shardOf('agent-7', 4)));
    expect(shardOf('agent-7', 4)).toBe(shardOf('agent-7', 4));
    // The count is read at each use (a router takes registry-sync's published one).
    shards = 1;
    expect(keys.acksOf('agent-7')).toBe('p:acks');
  });
});

describe('watchdog members of the due set', () => {
  it('are told from a task’s own entry by a character no id has', () => {
    expect(watchdogMember('t:1')).toBe('#t:1');
    expect(dueTaskId('#t:1')).toBe('t:1');
    expect(dueTaskId('t:1')).toBe('t:1');
  });

  it('and so is a final state’s follow-up', () => {
    expect(followUpMember('t:1')).toBe('!t:1');
    expect(dueTaskId('!t:1')).toBe('t:1');
    expect([dueKind('t:1'), dueKind('#t:1'), dueKind('!t:1')]).toEqual([
      'due',
      'watchdog',
      'follow-up',
    ]);
  });
});
