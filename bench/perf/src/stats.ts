/** Latency and rate summaries, computed from raw samples (a run holds at most a few 10k). */

/** Percentiles of one latency distribution, in ms. */
export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** An empty distribution: every figure NaN, so a missing figure never passes for a real one. */
export const EMPTY_SUMMARY: Summary = {
  count: 0,
  mean: NaN,
  p50: NaN,
  p90: NaN,
  p99: NaN,
  max: NaN,
};

/**
 * The `q`-quantile (0..1) of ascending `sorted` by the nearest-rank method (the value at rank
 * ⌈q·n⌉), the definition HdrHistogram and most load tools report.
 */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Summarises samples (any order; the array is not modified). */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return EMPTY_SUMMARY;
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  let sum = 0;
  for (const v of list) sum += v;
  return {
    count: list.length,
    mean: sum / list.length,
    p50: quantile(list, 0.5),
    p90: quantile(list, 0.9),
    p99: quantile(list, 0.99),
    max: list[list.length - 1] as number,
  };
}

/** The median of finite values (mean of the middle two for an even count); NaN when none. */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1
    ? (finite[mid] as number)
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

/** Rounds for display and for the JSON line: 3 significant decimals below 10, fewer above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const abs = Math.abs(value);
  const digits = abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 10 ? 2 : 3;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
