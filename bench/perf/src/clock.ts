/**
 * Time shared by every bench process. CLOCK_MONOTONIC (what `process.hrtime` reads) is one clock
 * for the whole machine, so a receipt time taken in an agent process and a submit time taken in
 * the caller process can be subtracted; `Date.now()` would have only millisecond resolution.
 */

/** Milliseconds on the machine-wide monotonic clock, with microsecond resolution. */
export function monoMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
