import { CallCode, failed, type CallFailure } from './failures.ts';

/**
 * Socket errors that happen before a request is written: the endpoint never saw it, so the task
 * can go elsewhere without spending an attempt.
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND']);

/** Error codes that are a socket's or undici's (`ECONNRESET`, `UND_ERR_SOCKET`…). */
const SOCKET_CODE = /^(E[A-Z0-9_]+|UND_ERR_[A-Z0-9_]+)$/;

/** How deep the `cause` chain is searched: fetch wraps a socket's error once, SDKs once more. */
const MAX_DEPTH = 6;

/**
 * The first socket error code in `err` or its causes (fetch throws `TypeError('fetch failed')`
 * with the socket's error as `cause`; a dual-stack connect fails with an `AggregateError`).
 */
export function socketErrorCode(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > MAX_DEPTH) return undefined;
  const { code, cause, errors } = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && SOCKET_CODE.test(code)) return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = socketErrorCode(inner, depth + 1);
      if (found) return found;
    }
  }
  return socketErrorCode(cause, depth + 1);
}

/**
 * The failure for a connection-level error, undefined for anything else: a refused connection
 * or an unknown host is `ENDPOINT_UNREACHABLE` with `unreachable: true`; any other socket error
 * (reset, closed mid-reply) may have reached the endpoint, so it is a retryable `ENDPOINT_ERROR`.
 */
export function networkFailure(err: unknown): CallFailure | undefined {
  const code = socketErrorCode(err);
  if (code === undefined) return undefined;
  if (NEVER_SENT.has(code))
    return failed(CallCode.unreachable, `endpoint unreachable: ${code}`, true, {
      unreachable: true,
    });
  return failed(CallCode.endpointError, `connection failed: ${code}`, true);
}
