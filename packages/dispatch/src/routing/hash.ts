/**
 * 32-bit FNV-1a over the UTF-16 code units of a string, finished with a murmur3 avalanche so
 * that nearby keys ("agent#1", "agent#2") land far apart on the ring. A `seed` gives an
 * independent hash family (0 is the ring's).
 */
export function hash32(key: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
