/**
 * mulberry32: a tiny 32-bit PRNG with a full 2^32 period, returning numbers in [0, 1). Unlike
 * `Math.random` the same seed gives the same sequence on every machine, which the routing lab,
 * the routing microbenchmark and the policy's property tests rely on to rank the same fleets.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
