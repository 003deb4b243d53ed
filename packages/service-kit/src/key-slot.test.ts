import { describe, expect, it } from 'vitest';
import { groupBySlot, keySlot } from './key-slot.ts';

describe('keySlot', () => {
  it('answers as CLUSTER KEYSLOT does', () => {
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('hello')).toBe(866);
  });

  it('hashes only the hash tag when there is a non-empty one', () => {
    expect(keySlot('reach:{a:x}:inbox')).toBe(keySlot('a:x'));
    expect(keySlot('reach:{a:x}')).toBe(keySlot('other:{a:x}:pending'));
    expect(keySlot('a{}b')).toBe(keySlot('a{}b'));
    expect(keySlot('a{}{b}')).not.toBe(keySlot('b'));
  });

  it('groups items by slot, keeping their order', () => {
    const keys = ['r:{a:1}:inbox', 'r:{pool:x}', 'r:{a:1}:pending', 'r:{pool:x}:p1'];
    expect(groupBySlot(keys, (k) => k)).toEqual([
      ['r:{a:1}:inbox', 'r:{a:1}:pending'],
      ['r:{pool:x}', 'r:{pool:x}:p1'],
    ]);
  });
});
