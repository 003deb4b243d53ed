/** Exit codes of `reach` (documented in `reach --help`). */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** The task ended dead (or failed) — `submit --wait`. */
  taskFailed: 1,
  /** Bad command line. */
  usage: 2,
  /** The server answered an error (its code is printed) or could not be reached. */
  server: 3,
  /** `submit --wait` gave up before the task ended (as timeout(1) does). */
  waitTimeout: 124,
  /** A bug in reach itself (sysexits EX_SOFTWARE). */
  internal: 70,
} as const;

/** A mistake on the command line: exit 2 with the message and a pointer to the help. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** True when `err` is a {@link UsageError}. */
export function isUsageError(err: unknown): err is UsageError {
  return err instanceof UsageError;
}

// Server and network errors are the SDK's (@agent-reach/worker-sdk/http): ReachHttpError with
// the server's stable code, ReachConnectionError when no answer came.
