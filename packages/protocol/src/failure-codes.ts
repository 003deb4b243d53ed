/**
 * A failed task attempt carries a short code besides its error text (`error_code` on the acks
 * stream): what callers, `GET /v1/stats` and the console group failures by. Workers choose their
 * own (`MODEL_NOT_LOADED`, `RATE_LIMITED`…); the SDK and the server use these.
 */
export const FailureCode = {
  /** The handler threw without a code of its own; also a failure that names none. */
  handlerError: 'HANDLER_ERROR',
  /** The task's deadline passed before or while it ran. */
  deadlineExceeded: 'DEADLINE_EXCEEDED',
  /** The task's payload is not valid JSON text. */
  invalidPayload: 'INVALID_PAYLOAD',
  /** The handler's value could not be turned into JSON. */
  resultNotJson: 'RESULT_NOT_JSON',
  /** The result nests deeper than 64 levels (refused by registry-sync). */
  resultTooDeep: 'JSON_TOO_DEEP',
  /** A probe's `health()` check said no, threw or did not answer in time. */
  healthCheckFailed: 'HEALTH_CHECK_FAILED',
} as const;

/** What a failure code looks like: upper-case letters, digits and `_`, 1–64 characters. */
export const FAILURE_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/** True for a string that may be a failure code. */
export function isFailureCode(value: unknown): value is string {
  return typeof value === 'string' && FAILURE_CODE_PATTERN.test(value);
}
