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

/** The server answered with an error reply `{error: CODE, message}` (or a non-JSON error). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /** The stable error code (docs/errors.md), or `HTTP_<status>` when the reply had none. */
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** True when `err` is an {@link ApiError}. */
export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/** The server could not be reached or did not answer in time. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  /** The URL that was requested. */
  readonly url: string;
  constructor(url: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.url = url;
  }
}

/** True when `err` is a {@link NetworkError}. */
export function isNetworkError(err: unknown): err is NetworkError {
  return err instanceof NetworkError;
}
