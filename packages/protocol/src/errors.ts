/**
 * Stable error codes of the HTTP API. Users match on these; docs/errors.md lists every one with
 * how to fix it (a test checks). A retired code is never reused.
 */
export const ERROR_CODES = {
  INVALID_BODY: 400,
  INVALID_QUERY: 400,
  INVALID_PARAMS: 400,
  INVALID_JSON: 400,
  JSON_TOO_DEEP: 400,
  INVALID_DELAY: 400,
  INVALID_SCHEDULE: 400,
  INVALID_INPUT_SCHEMA: 400,
  INVALID_CARD: 400,
  INVALID_ENDPOINT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  HOST_NOT_ALLOWED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  CARD_URL_NOT_ALLOWED: 403,
  PUSH_URL_NOT_ALLOWED: 403,
  ENDPOINT_URL_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  TASK_NOT_FOUND: 404,
  CAPABILITY_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  CARD_NOT_FOUND: 404,
  ENDPOINT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  STALE_EPOCH: 409,
  NOT_DEAD: 409,
  ALREADY_FINAL: 409,
  PARENT_DEADLINE_NEAR: 409,
  ENDPOINT_READ_ONLY: 409,
  ACL_NOT_ENABLED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  AT_CAPACITY: 429,
  QUEUE_FULL: 429,
  RATE_LIMITED: 429,
  AUTH_FAILURES: 429,
  INTERNAL: 500,
  CARD_FETCH_FAILED: 502,
  NO_AGENT: 503,
  STORE_UNAVAILABLE: 503,
  EVENTS_UNAVAILABLE: 503,
  NO_SNAPSHOT: 503,
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `value` is one of the stable codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
