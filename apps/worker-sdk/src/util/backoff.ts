/** Exponential backoff settings. */
export interface BackoffOptions {
  /**
   * Delay before the first retry.
   * @default 500
   */
  baseMs?: number;
  /**
   * Largest delay, jitter included.
   * @default 10000
   */
  capMs?: number;
  /**
   * Share of the delay drawn at random either way: 0.2 spreads a 1000 ms delay over 800–1200 ms,
   * so a fleet that lost its registry at once does not come back in lockstep.
   * @default 0.2
   */
  jitter?: number;
}

/** {@link BackoffOptions} with every default filled in. */
export type CompiledBackoff = Required<BackoffOptions>;

/** Fills in and checks backoff settings. */
export function compileBackoff(
  options: BackoffOptions = {},
  defaults: CompiledBackoff = DEFAULT_BACKOFF,
): CompiledBackoff {
  const out: CompiledBackoff = {
    baseMs: options.baseMs ?? defaults.baseMs,
    capMs: options.capMs ?? defaults.capMs,
    jitter: options.jitter ?? defaults.jitter,
  };
  if (!(out.baseMs > 0)) throw new RangeError(`backoff baseMs must be > 0, got ${out.baseMs}`);
  if (!(out.capMs >= out.baseMs))
    throw new RangeError(`backoff capMs must be ≥ baseMs, got ${out.capMs}`);
  if (!(out.jitter >= 0 && out.jitter <= 1))
    throw new RangeError(`backoff jitter must be within 0..1, got ${out.jitter}`);
  return out;
}

/** Registration retry defaults: base 500 ms, cap 10 s, ±20 %. */
export const DEFAULT_BACKOFF: CompiledBackoff = Object.freeze({
  baseMs: 500,
  capMs: 10_000,
  jitter: 0.2,
});

/**
 * Delay before retry number `retry` (0 for the first): `baseMs · 2^retry`, spread by ±jitter,
 * never above `capMs`. `random` is injectable for tests.
 */
export function backoffDelayMs(
  retry: number,
  backoff: CompiledBackoff,
  random: () => number = Math.random,
): number {
  const exp = backoff.baseMs * 2 ** Math.min(Math.max(retry, 0), 30);
  const spread = 1 + backoff.jitter * (2 * random() - 1);
  return Math.round(Math.min(backoff.capMs, exp * spread));
}

/** Counts consecutive failures and hands out the next delay; `reset()` after a success. */
export class Backoff {
  #retry = 0;
  /** @param backoff - compiled settings */
  constructor(private readonly backoff: CompiledBackoff) {}
  /** Delay before the next attempt; each call grows it. */
  next(): number {
    return backoffDelayMs(this.#retry++, this.backoff);
  }
  /** Consecutive failures so far. */
  get failures(): number {
    return this.#retry;
  }
  /** Starts over after a success. */
  reset(): void {
    this.#retry = 0;
  }
}
