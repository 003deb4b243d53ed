import { describe, expect, it } from 'vitest';
import { keySlot } from './key-slot.ts';
import {
  followUpMember,
  dueKind,
  dueTaskId,
  reachKeys,
  shardOf,
  taskShardTag,
  watchdogMember,
} from './keys.ts';

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
    const keys = reachKeys('p', { shards: () => shards });
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

describe('task keys by shard', () => {
  it('put every key of a task under its shard’s tag, the kind before the id', () => {
    const keys = reachKeys('p', { taskShards: () => 4 });
    const id = 'acme/order:1';
    const tag = `{${taskShardTag(keys.taskShardOf(id), 4)}}`;
    expect(keys.task(id)).toBe(`p:${tag}:h:${id}`);
    expect(keys.timeline(id)).toBe(`p:${tag}:tl:${id}`);
    expect(keys.taskEvents(id)).toBe(`p:${tag}:ev:${id}`);
    expect(keys.children(id)).toBe(`p:${tag}:ch:${id}`);
    expect(keys.a2aPush(id)).toBe(`p:${tag}:push:${id}`);
    expect(keys.taskIndex(keys.taskShardOf(id))).toBe(`p:${tag}:index`);
    const slots = new Set(
      [
        keys.task(id),
        keys.timeline(id),
        keys.taskEvents(id),
        keys.children(id),
        keys.taskIndex(keys.taskShardOf(id)),
      ].map(keySlot),
    );
    expect(slots.size).toBe(1);
  });

  it('cannot be mistaken for another task’s key, whatever the ids hold', () => {
    const keys = reachKeys('p');
    // One shard, one tag: only the kind before the id tells `a`'s timeline from task `tl:a`'s hash.
    const all = ['a', 'a:tl', 'tl:a', 'h:a', 'a:h'].flatMap((id) => [
      keys.task(id),
      keys.timeline(id),
      keys.taskEvents(id),
      keys.children(id),
    ]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('share one tag per shard, many tasks to a tag', () => {
    const keys = reachKeys('p', { taskShards: () => 3 });
    const tags = new Set<string>();
    for (let i = 0; i < 300; i++) tags.add(keys.task(`task-${i}`).split('}')[0] as string);
    expect(tags.size).toBe(3);
  });

  it('space the shards’ slots evenly: shard i of n in the middle of the i-th n-th', () => {
    for (const n of [1, 3, 6, 16, 64]) {
      const slots = Array.from({ length: n }, (_, i) => keySlot(`{${taskShardTag(i, n)}}`));
      slots.forEach((slot, i) => {
        expect(slot).toBeGreaterThanOrEqual(Math.floor(((i + 0.25) * 16384) / n));
        expect(slot).toBeLessThan(Math.floor(((i + 0.75) * 16384) / n));
      });
      // 64 shards over 16 masters holding even slot ranges: 4 on each.
      if (n === 64) {
        const perMaster = new Map<number, number>();
        for (const slot of slots) {
          const m = Math.floor(slot / 1024);
          perMaster.set(m, (perMaster.get(m) ?? 0) + 1);
        }
        expect([...perMaster.values()]).toEqual(Array(16).fill(4));
      }
    }
    expect(() => taskShardTag(3, 3)).toThrow(RangeError);
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

describe('tenant records', () => {
  it('share the {tenants} slot with the set of names, so one MULTI writes both', () => {
    const keys = reachKeys('p');
    expect(keys.tenant('acme')).toBe('p:{tenants}:t:acme');
    expect(keys.tenants()).toBe('p:{tenants}');
    expect(keySlot(keys.tenant('acme'))).toBe(keySlot(keys.tenants()));
  });

  it('refuse a name that is not a tenant', () => {
    const keys = reachKeys('p');
    expect(() => keys.tenant('Acme')).toThrow(TypeError);
    expect(() => keys.tenant('a}b')).toThrow(TypeError);
  });
});
