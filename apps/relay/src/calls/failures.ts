import { ENDPOINT_UNREACHABLE, FailureCode } from '@agent-reach/protocol';
import type { CallOutcome } from './endpoint-client.ts';

/** A call that did not complete. */
export type CallFailure = Extract<CallOutcome, { kind: 'failed' }>;

/**
 * The failure codes the endpoint clients report, besides `HTTP_<status>` (one place, so the
 * relay's codes never drift apart; the ones the worker SDK also uses come from the protocol).
 */
export const CallCode = {
  /** The endpoint gave no answer within the target's `timeoutMs` (retryable). */
  timeout: 'ENDPOINT_TIMEOUT',
  /** The request never got out: connection refused, or the host name unknown (retryable). */
  unreachable: ENDPOINT_UNREACHABLE,
  /** The connection broke after the request went out, or the reply broke its protocol (retryable). */
  endpointError: 'ENDPOINT_ERROR',
  /** The task was cancelled while its call ran (not retryable). */
  cancelled: 'CANCELLED',
  /** The relay stopped while the call ran (retryable: another relay can run it). */
  shutdown: 'RELAY_SHUTDOWN',
  /** The task's deadline passed while the call ran (not retryable). */
  deadline: FailureCode.deadlineExceeded,
  /** A 2xx HTTP reply whose body is not JSON (not retryable). */
  resultNotJson: FailureCode.resultNotJson,
  /** The endpoint ran the call and reported a failure (an MCP `isError`, an SSE `error` event). */
  handlerError: FailureCode.handlerError,
  /** An A2A task ended `failed` (retryable) or `rejected` (not retryable). */
  a2aFailed: 'A2A_FAILED',
  /** An A2A task stopped to ask for input or authentication, which a relay cannot give. */
  a2aInputRequired: 'A2A_INPUT_REQUIRED',
  /** An A2A server answered with a protocol error (JSON-RPC or REST error). */
  a2aError: 'A2A_ERROR',
  /** An MCP server answered with a JSON-RPC error (unknown tool, invalid arguments…). */
  mcpError: 'MCP_ERROR',
} as const;

/** Longest text taken from an endpoint's reply into a failure's `error`. */
export const ERROR_TEXT_MAX_CHARS = 500;

/** `text` cut to {@link ERROR_TEXT_MAX_CHARS}. */
export function clipText(text: string): string {
  return text.length > ERROR_TEXT_MAX_CHARS ? text.slice(0, ERROR_TEXT_MAX_CHARS) : text;
}

/** A failed outcome. */
export function failed(
  code: string,
  error: string,
  retryable: boolean,
  extra?: { retryAfterMs?: number; unreachable?: boolean },
): CallFailure {
  return { kind: 'failed', code, error, retryable, ...extra };
}

/**
 * Milliseconds a `Retry-After` value asks to wait: delay-seconds, or an HTTP date (0 when it is
 * past); undefined when absent or neither.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names its weekday and zone; Date.parse would take bare numbers too.
  if (!/^[A-Za-z]{3},/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The failure for an HTTP reply that is neither 2xx nor followed: 408, 429 and 5xx are
 * retryable (429 and 503 with their `Retry-After`), every other status is not.
 */
export function httpStatusFailure(
  status: number,
  bodyText: string,
  retryAfter: string | null,
  now = Date.now(),
): CallFailure {
  const retryable = status === 408 || status === 429 || status >= 500;
  const wait = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : undefined;
  const error = clipText(bodyText) || `HTTP ${status}`;
  return failed(
    `HTTP_${status}`,
    error,
    retryable,
    wait === undefined ? {} : { retryAfterMs: wait },
  );
}

/** An error's message, or the thrown value as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : String(err);
}
