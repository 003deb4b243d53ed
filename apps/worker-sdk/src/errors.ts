import { FailureCode, isFailureCode, type CallbackItem } from '@agent-reach/protocol';

/**
 * Base class of every error the SDK throws, so callers can tell ours from the rest with one
 * guard. Subclasses carry typed, readonly fields: match on those (or on `code` for HTTP
 * errors), never on `message`, whose wording may change.
 */
export class ReachError extends Error {
  override readonly name: string = 'ReachError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** True when `value` is any error thrown by the SDK. */
export function isReachError(value: unknown): value is ReachError {
  return value instanceof ReachError;
}

/** A router or registry answered with a non-2xx status. */
export class ReachHttpError extends ReachError {
  override readonly name = 'ReachHttpError';
  /** The stable error code from the reply (`NO_AGENT`, `STALE_EPOCH`, …), or `HTTP_<status>` when the body had none. */
  readonly code: string;
  /** HTTP status. */
  readonly status: number;
  /** The parsed reply body (or its text when it was not JSON). */
  readonly body: unknown;
  /** `METHOD url` of the request. */
  readonly request: string;
  constructor(request: string, status: number, body: unknown) {
    const b = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const code = typeof b['error'] === 'string' ? b['error'] : `HTTP_${status}`;
    const detail = typeof b['message'] === 'string' ? `: ${b['message']}` : '';
    super(`${request} answered ${status} ${code}${detail}`);
    this.code = code;
    this.status = status;
    this.body = body;
    this.request = request;
  }
}

/** True when `value` is a {@link ReachHttpError}. */
export function isReachHttpError(value: unknown): value is ReachHttpError {
  return value instanceof ReachHttpError;
}

/** A request never got an HTTP answer: connection refused or reset, DNS failure, or timeout. */
export class ReachConnectionError extends ReachError {
  override readonly name = 'ReachConnectionError';
  /** `METHOD url` of the request. */
  readonly request: string;
  /** True when the request timed out (as opposed to failing to connect). */
  readonly timedOut: boolean;
  constructor(request: string, timedOut: boolean, cause: unknown) {
    super(`${request} ${timedOut ? 'timed out' : 'failed to connect'}`, { cause });
    this.request = request;
    this.timedOut = timedOut;
  }
}

/** True when `value` is a {@link ReachConnectionError}. */
export function isReachConnectionError(value: unknown): value is ReachConnectionError {
  return value instanceof ReachConnectionError;
}

/**
 * A submission got no definite answer: every try ended in a 5xx, a 429 or a lost connection, and
 * the client stopped retrying (`submitMaxAttempts`, `submitRetryTimeoutMs`, or `run()`'s timeout).
 * The router may have accepted the task all the same — a 503 can follow a write that reached
 * Redis — so submit it again later with the same {@link taskId}: a repeat answers 200 with the
 * existing task and never runs it twice. Thrown by `ReachClient.submit()` and `run()`.
 */
export class SubmitFailedError extends ReachError {
  override readonly name = 'SubmitFailedError';
  /** The task_id every try carried (the caller's, or the one the client made): retry with it. */
  readonly taskId: string;
  /** Tries made, the first included. */
  readonly attempts: number;
  /** The last try's stable code (`STORE_UNAVAILABLE`, `NO_AGENT`, `AT_CAPACITY`, `INTERNAL`, `HTTP_502`…), or undefined when no answer came. */
  readonly code: string | undefined;
  /** The last try's HTTP status, or undefined when no answer came. */
  readonly status: number | undefined;
  /** The last try's error (also `cause`). */
  readonly lastError: ReachHttpError | ReachConnectionError;
  constructor(taskId: string, attempts: number, lastError: ReachHttpError | ReachConnectionError) {
    super(
      `task ${taskId} not confirmed after ${attempts} ${attempts === 1 ? 'try' : 'tries'} (${lastError.message}); submit it again with the same task_id`,
      { cause: lastError },
    );
    this.taskId = taskId;
    this.attempts = attempts;
    this.code = isReachHttpError(lastError) ? lastError.code : undefined;
    this.status = isReachHttpError(lastError) ? lastError.status : undefined;
    this.lastError = lastError;
  }
}

/** True when `value` is a {@link SubmitFailedError}. */
export function isSubmitFailedError(value: unknown): value is SubmitFailedError {
  return value instanceof SubmitFailedError;
}

/** A reply had a 2xx status but did not match the wire contract (a version mismatch, usually). */
export class ReachProtocolError extends ReachError {
  override readonly name = 'ReachProtocolError';
  /** `METHOD url` of the request. */
  readonly request: string;
  /** The reply body as received. */
  readonly body: unknown;
  constructor(request: string, body: unknown) {
    super(`${request} answered a body that does not match the protocol`);
    this.request = request;
    this.body = body;
  }
}

/** True when `value` is a {@link ReachProtocolError}. */
export function isReachProtocolError(value: unknown): value is ReachProtocolError {
  return value instanceof ReachProtocolError;
}

/**
 * A task ended `failed` or `dead`; thrown by `ReachClient.run()`. For `dead` (the server gave
 * up on it), `error` is the dead-letter reason: `max_attempts`, `deadline`, `loop`,
 * `not_retryable` or `no_agent` — stable codes, safe to match on.
 */
export class TaskFailedError extends ReachError {
  override readonly name = 'TaskFailedError';
  /** The task. */
  readonly taskId: string;
  /** Its final status (`cancelled`: someone cancelled it, POST /v1/tasks/:id/cancel). */
  readonly status: 'failed' | 'dead' | 'cancelled';
  /** The worker's error text (`failed`), or the dead-letter reason (`dead`), if any. */
  readonly error: string | undefined;
  /** The whole callback item. */
  readonly item: CallbackItem;
  constructor(item: CallbackItem & { status: 'failed' | 'dead' | 'cancelled' }) {
    super(
      `task ${item.task_id} ended ${item.status}${item.error === undefined ? '' : `: ${item.error}`}`,
    );
    this.taskId = item.task_id;
    this.status = item.status;
    this.error = item.error;
    this.item = item;
  }
}

/** True when `value` is a {@link TaskFailedError}. */
export function isTaskFailedError(value: unknown): value is TaskFailedError {
  return value instanceof TaskFailedError;
}

/** No result arrived on the callback topic in time. The task may still complete later. */
export class ResultTimeoutError extends ReachError {
  override readonly name = 'ResultTimeoutError';
  /** The task waited for. */
  readonly taskId: string;
  /** How long it was waited for. */
  readonly timeoutMs: number;
  constructor(taskId: string, timeoutMs: number) {
    super(`no result for task ${taskId} within ${timeoutMs} ms`);
    this.taskId = taskId;
    this.timeoutMs = timeoutMs;
  }
}

/** True when `value` is a {@link ResultTimeoutError}. */
export function isResultTimeoutError(value: unknown): value is ResultTimeoutError {
  return value instanceof ResultTimeoutError;
}

/** The agent or client was closed while the call was waiting. */
export class ReachClosedError extends ReachError {
  override readonly name = 'ReachClosedError';
  /** Which object was closed. */
  readonly what: 'agent' | 'client';
  constructor(what: 'agent' | 'client') {
    super(`the ${what} is closed`);
    this.what = what;
  }
}

/** True when `value` is a {@link ReachClosedError}. */
export function isReachClosedError(value: unknown): value is ReachClosedError {
  return value instanceof ReachClosedError;
}

/** A newer instance of the same agent took over (the registry answered `STALE_EPOCH`). */
export class AgentFencedError extends ReachError {
  override readonly name = 'AgentFencedError';
  /** The agent. */
  readonly agentId: string;
  /** The epoch this instance held. */
  readonly epoch: number;
  constructor(agentId: string, epoch: number, cause?: unknown) {
    super(`agent ${agentId} epoch ${epoch} was fenced off by a newer instance`, { cause });
    this.agentId = agentId;
    this.epoch = epoch;
  }
}

/** True when `value` is an {@link AgentFencedError}. */
export function isAgentFencedError(value: unknown): value is AgentFencedError {
  return value instanceof AgentFencedError;
}

/**
 * Throw this from a handler when running the task again cannot help (bad input, a refused
 * request): the task is reported `retryable: false` and goes straight to the dead letters.
 * Any error with a `retryable === false` property is treated the same way.
 */
export class NonRetryableError extends ReachError {
  override readonly name = 'NonRetryableError';
  /** Always false. */
  readonly retryable = false;
  /** The failure's code (`^[A-Z][A-Z0-9_]{0,63}$`), when given; `HANDLER_ERROR` otherwise. */
  readonly code: string | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options);
    this.code = options?.code;
  }
}

/** True when `value` is a {@link NonRetryableError}. */
export function isNonRetryableError(value: unknown): value is NonRetryableError {
  return value instanceof NonRetryableError;
}

/**
 * The code a handler's failure is reported with (`error_code`, grouped by in `GET /v1/stats`):
 * the thrown value's `code` when it is one (`^[A-Z][A-Z0-9_]{0,63}$`: `MODEL_NOT_LOADED`, or a
 * Node.js error's `ECONNREFUSED`), `DEADLINE_EXCEEDED` for a deadline, `HANDLER_ERROR` otherwise.
 */
export function failureCodeOf(value: unknown): string {
  if (value instanceof TaskAbortedError && value.reason === 'deadline')
    return FailureCode.deadlineExceeded;
  const code: unknown =
    typeof value === 'object' && value !== null ? (value as { code?: unknown }).code : undefined;
  return isFailureCode(code) ? code : FailureCode.handlerError;
}

/** True unless `value` is a {@link NonRetryableError} or carries `retryable === false`. */
export function isRetryable(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return (value as { retryable?: unknown }).retryable !== false;
}

/** Why a task's `signal` was aborted; it is the signal's `reason`. */
export class TaskAbortedError extends ReachError {
  override readonly name = 'TaskAbortedError';
  /** The task. */
  readonly taskId: string;
  /**
   * `deadline`: its deadline_ms passed; `shutdown`: the agent's shutdown timeout ran out;
   * `cancelled`: the task was cancelled (POST /v1/tasks/:id/cancel).
   */
  readonly reason: 'deadline' | 'shutdown' | 'cancelled';
  /** A deadline or a cancel will not come back, so running again cannot help; a shutdown can. */
  readonly retryable: boolean;
  constructor(taskId: string, reason: 'deadline' | 'shutdown' | 'cancelled') {
    super(
      reason === 'deadline'
        ? 'deadline passed'
        : reason === 'cancelled'
          ? 'task cancelled'
          : 'aborted by agent shutdown',
    );
    this.taskId = taskId;
    this.reason = reason;
    this.retryable = reason === 'shutdown';
  }
}

/** True when `value` is a {@link TaskAbortedError}. */
export function isTaskAbortedError(value: unknown): value is TaskAbortedError {
  return value instanceof TaskAbortedError;
}

/** Text for a failed ack: an error's message, or the thrown value as text. */
export function errorText(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
