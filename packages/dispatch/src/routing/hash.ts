/** FNV-1a's offset basis: the state before any input. */
export const FNV_OFFSET = 0x811c9dc5;

/**
 * FNV-1a over the UTF-16 code units of `key`, continuing from state `h`. Split from `hash32` so
 * the ring can hash `"<agent_id>#"` once and feed only each virtual node's number after it.
 */
export function fnv1a(key: string, h: number): number {
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The murmur3 finaliser: spreads an FNV state's bits over the whole word. */
export function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * 32-bit FNV-1a over the UTF-16 code units of a string, finished with a murmur3 avalanche so
 * that nearby keys ("agent#1", "agent#2") land far apart on the ring. A `seed` gives an
 * independent hash family (0 is the ring's).
 */
export function hash32(key: string, seed = 0): number {
  return avalanche(fnv1a(key, (FNV_OFFSET ^ seed) >>> 0));
}
