import type { ReachKeys } from './keys.ts';

/**
 * Task priorities in pools. A capability's pool is a few streams, one per priority band, read
 * highest band first; each stream is FIFO. Band 0 is the pool stream itself (priority 0, the
 * default), so a pool of default-priority tasks is what it always was. Bands rather than ten
 * streams: every stream is one more a pull agent reads on each pass.
 *
 * | band | priorities | stream           |
 * | ---- | ---------- | ---------------- |
 * | 2    | 5–9        | `<pool>:b2`      |
 * | 1    | 1–4        | `<pool>:b1`      |
 * | 0    | 0          | `<pool>`         |
 */
export const POOL_BANDS = 3;

/** The lowest priority of each band above 0, highest band first. */
const BAND_FLOORS: readonly number[] = [5, 1];

/** The band of the pool a task of `priority` waits in (0 … POOL_BANDS − 1). */
export function poolBandOf(priority: number): number {
  for (const [i, floor] of BAND_FLOORS.entries()) if (priority >= floor) return POOL_BANDS - 1 - i;
  return 0;
}

/** Every band stream of pool `poolId`, highest band first: the order pull agents read them in. */
export function poolStreams(keys: ReachKeys, poolId: string): string[] {
  const out: string[] = [];
  for (let band = POOL_BANDS - 1; band >= 0; band--) out.push(keys.poolBand(poolId, band));
  return out;
}

/** The band of a pool stream named by `ReachKeys.poolBand` (0 for any other stream). */
export function bandOfStream(stream: string): number {
  const m = /\}:b(\d)$/.exec(stream);
  return m ? Number(m[1]) : 0;
}
