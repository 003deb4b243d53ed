/** Nearest-rank percentile (p in [0, 100]) of values; NaN when there are none. */
export function percentile(values: ArrayLike<number>, p: number): number {
  return percentiles(values, [p])[0] ?? NaN;
}

/** Several nearest-rank percentiles at once (sorts a copy once). */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return ps.map(() => NaN);
  return ps.map((p) => {
    const rank = Math.ceil((p / 100) * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
  });
}

/** Arithmetic mean; NaN when empty. */
export function mean(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return values.length ? sum / values.length : NaN;
}

/** Population standard deviation; NaN when empty. */
export function stdev(values: ArrayLike<number>): number {
  const m = mean(values);
  let sq = 0;
  for (let i = 0; i < values.length; i++) sq += ((values[i] as number) - m) ** 2;
  return values.length ? Math.sqrt(sq / values.length) : NaN;
}

/** How evenly a quantity is spread over agents. */
export interface Spread {
  min: number;
  max: number;
  /** max / min; Infinity when some agent got nothing. */
  ratio: number;
  stdev: number;
}

/** Spread of per-agent values. */
export function spreadOf(values: readonly number[]): Spread {
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { min, max, ratio: min > 0 ? max / min : Infinity, stdev: stdev(values) };
}
