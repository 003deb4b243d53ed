/** Retry backoff settings. */
export interface BackoffSettings {
  retryBaseMs: number;
  retryCapMs: number;
}

/** Growth per attempt and the jitter band (±20 %), as the architecture fixes them. */
export const BACKOFF_FACTOR = 2;
export const BACKOFF_JITTER = 0.2;

/**
 * Delay before attempt `failedAttempt + 1`: base × 2^(failedAttempt − 1), capped, then spread
 * ±20 % so that tasks failing together do not retry together.
 */
export function backoffMs(
  failedAttempt: number,
  s: BackoffSettings,
  random: () => number = Math.random,
): number {
  const raw = Math.min(
    s.retryCapMs,
    s.retryBaseMs * BACKOFF_FACTOR ** Math.max(0, failedAttempt - 1),
  );
  const jitter = 1 + BACKOFF_JITTER * (2 * random() - 1);
  return Math.round(Math.min(s.retryCapMs * (1 + BACKOFF_JITTER), raw * jitter));
}
