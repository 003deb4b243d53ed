/** Options for {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. @default 10000 */
  timeoutMs?: number;
  /** Pause between probes. @default 50 */
  intervalMs?: number;
  /** Says what was awaited; it leads the error thrown on the deadline. */
  message?: string;
}

/** Thrown by {@link waitFor} when the deadline passes. `cause` is the probe's last error, if any. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.timeoutMs = timeoutMs;
  }
}

/** True when `err` is a {@link WaitTimeoutError}. */
export function isWaitTimeoutError(err: unknown): err is WaitTimeoutError {
  return err instanceof WaitTimeoutError;
}

type Falsy = undefined | null | false;

/**
 * Polls `probe` until it returns a truthy value and resolves with that value. A probe that throws
 * counts as "not yet" (a server that is still starting refuses connections); its last error is
 * reported when the deadline passes. Tests use this instead of sleeping for a fixed time.
 *
 * @throws {WaitTimeoutError} with `opts.message` when nothing truthy arrives within `timeoutMs`.
 */
export async function waitFor<T>(
  probe: () => Promise<T | Falsy> | T | Falsy,
  opts: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      lastError = undefined;
    } catch (err: unknown) {
      lastError = err;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const what = opts.message ?? 'condition not met';
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new WaitTimeoutError(
        `${what} — timed out after ${timeoutMs} ms${why}`,
        timeoutMs,
        lastError,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}
