import type { CallRequest } from './endpoint-client.ts';
import { CallCode, failed, type CallFailure } from './failures.ts';

/** Why an attempt was stopped before the endpoint answered. */
export type StopReason = 'cancelled' | 'shutdown' | 'timeout' | 'deadline';

/**
 * The stop conditions of one call: the request's signal (a cancel, or the relay stopping), the
 * endpoint's timeout and the task's deadline, merged into one {@link signal} for the protocol
 * client, with the reason it fired kept so the outcome can say which.
 */
export class Attempt {
  readonly #controller = new AbortController();
  readonly #request: AbortSignal;
  readonly #timeoutMs: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reason: StopReason | undefined;

  /**
   * @param req the call: its `signal` and `deadlineMs` (0 for none)
   * @param timeoutMs longest the call may take; undefined when the protocol client keeps its own
   *   timeout (MCP's, which progress resets)
   */
  constructor(
    req: Pick<CallRequest, 'signal' | 'deadlineMs'>,
    timeoutMs: number | undefined,
    now = Date.now(),
  ) {
    this.#request = req.signal;
    this.#timeoutMs = timeoutMs;
    if (req.signal.aborted) {
      this.#stop(reasonOf(req.signal));
      return;
    }
    req.signal.addEventListener('abort', this.#onAbort, { once: true });
    const toDeadline = req.deadlineMs > 0 ? req.deadlineMs - now : Infinity;
    const toTimeout = timeoutMs ?? Infinity;
    if (toDeadline <= 0) this.#stop('deadline');
    else if (Number.isFinite(Math.min(toDeadline, toTimeout)))
      this.#timer = setTimeout(
        () => this.#stop(toDeadline <= toTimeout ? 'deadline' : 'timeout'),
        Math.min(toDeadline, toTimeout),
      );
  }

  /** Aborted when the call should stop; its reason is the {@link StopReason}. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the call was stopped; undefined while it may run. */
  get stopReason(): StopReason | undefined {
    return this.#reason;
  }

  /**
   * The outcome of a stopped call: `CANCELLED` (not retryable), `RELAY_SHUTDOWN` (retryable),
   * `ENDPOINT_TIMEOUT` (retryable) or `DEADLINE_EXCEEDED` (not retryable).
   */
  outcome(): CallFailure {
    switch (this.#reason) {
      case 'shutdown':
        return failed(CallCode.shutdown, 'the relay stopped during the call', true);
      case 'timeout':
        return failed(CallCode.timeout, `no answer within ${this.#timeoutMs} ms`, true);
      case 'deadline':
        return failed(CallCode.deadline, 'the task’s deadline passed during the call', false);
      default:
        return failed(CallCode.cancelled, 'the task was cancelled', false);
    }
  }

  /** Stops the timer and forgets the request's signal; call once the call is over. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#request.removeEventListener('abort', this.#onAbort);
  }

  readonly #onAbort = (): void => this.#stop(reasonOf(this.#request));

  #stop(reason: StopReason): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    clearTimeout(this.#timer);
    this.#controller.abort(reason);
  }
}

/** A request signal's abort as a stop reason: `'shutdown'` as such, anything else a cancel. */
function reasonOf(signal: AbortSignal): StopReason {
  return signal.reason === 'shutdown' ? 'shutdown' : 'cancelled';
}

/**
 * `work`'s value, or a rejection as soon as `signal` aborts (the work itself goes on: a shared
 * session's opening, say, that other calls wait for too).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
