/** Counters shared by a sink and its write backend. */
export interface Counters {
  written: number;
  dropped: number;
  failedWrites: number;
}

/**
 * One InfluxDB write endpoint. The sink calls it from one flush pass at a time, so a backend
 * never sees concurrent calls. No method rejects.
 */
export interface WriteBackend {
  /** The endpoint family. */
  readonly api: 'v1' | 'v2';
  /** Gets ready to write (v1: CREATE DATABASE once). Resolves false while that fails; try again later. */
  ready(): Promise<boolean>;
  /**
   * Retries batches that failed earlier, when their backoff is over or at once when `force`.
   * Resolves false while the server still fails, so the pass stops instead of hammering it.
   */
  retryPending(force: boolean): Promise<boolean>;
  /**
   * One attempt at one batch (≤ batchSize lines). A retryable failure keeps the batch for a later
   * retry (bounded) and resolves false; a rejected or exhausted batch is counted as dropped.
   */
  send(lines: string[]): Promise<boolean>;
  /** Flushes what the backend still holds and stops its timers. */
  close(): Promise<void>;
  /** Stops at once: no timers, no more retries. */
  detach(): void;
}

/** Exponential backoff with ±20 % jitter: `base · 2^(failures-1)`, capped at `max`. */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  const exp = Math.min(baseMs * 2 ** Math.max(0, failures - 1), maxMs);
  return Math.round(exp * (0.8 + Math.random() * 0.4));
}

/** `err.message` for an Error (with its cause's, as fetch hides ECONNREFUSED there), else its string form. */
export function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
