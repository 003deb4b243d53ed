import { randomUUID } from 'node:crypto';
import {
  CallbacksReply,
  MAX_BATCH_TASKS,
  ROUTES,
  TaskView,
  type SubmitBatchItem,
  type SubmitBody,
  type SubmitReply,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';
import {
  isReachConnectionError,
  isReachHttpError,
  ReachClosedError,
  SubmitFailedError,
  TaskFailedError,
  type ReachConnectionError,
  type ReachHttpError,
} from '../errors.ts';
import { Backoff } from '../util/backoff.ts';
import { checkReply } from '../util/check.ts';
import { joinUrl, requestOk } from '../util/http.ts';
import { abortReason, sleep } from '../util/sleep.ts';
import { CallbackPoller, type FinalCallbackItem } from './callbacks.ts';
import { followTaskEvents, type TaskEventMessage, type TaskEventsOptions } from './task-events.ts';
import { postTask, postTaskBatch, type RouterTarget } from './router-api.ts';
import {
  compileClientOptions,
  type CompiledClientOptions,
  type ReachClientOptions,
} from './options.ts';

/** A task to submit; `callback_topic` defaults to the client's own topic. */
export type SubmitRequest = Omit<SubmitBody, 'callback_topic'> & { callback_topic?: string };

/** Options of {@link ReachClient.result}. */
export interface ResultOptions {
  /**
   * How long to wait.
   * @default the client's `resultTimeoutMs`
   */
  timeoutMs?: number;
  /**
   * Stops waiting (rejects with the signal's reason).
   * @default none
   */
  signal?: AbortSignal;
}

/** Options of {@link ReachClient.run}. */
export interface RunOptions extends ResultOptions {
  /**
   * The task's id; a repeat returns the existing task, so a `run()` retried after a network
   * error does not run the work twice (a `SubmitFailedError` names the one it used).
   * @default a random UUID
   */
  taskId?: string;
  /**
   * Seconds the task may take before it is dead-lettered.
   * @default the server's default
   */
  timeoutS?: number;
  /**
   * Trace id to carry.
   * @default none (the server makes one)
   */
  traceId?: string;
}

/**
 * A submit failure that says nothing about whether the task was accepted, and that a try with the
 * same task_id may get past: a 5xx, a 429 (backpressure), or no answer at all.
 */
function isTransientSubmitError(err: unknown): err is ReachHttpError | ReachConnectionError {
  return (
    (isReachHttpError(err) && (err.status >= 500 || err.status === 429)) ||
    isReachConnectionError(err)
  );
}

/**
 * The callers' side: submit tasks by capability and await their results from this client's
 * callback topic, read by one shared long-poll loop.
 */
export class ReachClient {
  /** The settings in effect. */
  readonly options: CompiledClientOptions;
  readonly #log: Logger;
  readonly #poller: CallbackPoller;
  /** Aborted by `close()`: cuts a submit's backoff short. */
  readonly #closing = new AbortController();
  #closed: Promise<void> | undefined;

  /** Checks the options (throws on a bad one); sends nothing yet. */
  constructor(options: ReachClientOptions = {}) {
    this.options = compileClientOptions(options);
    this.#log = this.options.logger.child({
      module: 'client',
      callback_topic: this.options.callbackTopic,
    });
    this.#poller = new CallbackPoller({
      fetchPage: (after, signal) => this.#fetchPage(after, signal),
      maxBuffered: this.options.maxBufferedResults,
      retry: this.options.pollRetry,
      logger: this.#log,
    });
  }

  /** The topic this client's results arrive on. */
  get callbackTopic(): string {
    return this.options.callbackTopic;
  }

  /**
   * `POST /v1/tasks`. Resolves with the router's reply (202 new, 200 when the task_id existed).
   * Every try carries the same task_id (`req.task_id`, or one made here): a 5xx, a 429 or a
   * lost connection is retried with backoff (`submitRetry`) up to `submitMaxAttempts` tries and
   * `submitRetryTimeoutMs`, then rejects with a {@link SubmitFailedError} naming the task_id to
   * submit again with later (the task may have been accepted; a repeat never runs it twice).
   * Rejects at once with a {@link ReachHttpError} for a client error (`INVALID_BODY`,
   * `PAYLOAD_TOO_LARGE`…), and with the signal's reason when `signal` aborts.
   */
  async submit(req: SubmitRequest, signal?: AbortSignal): Promise<SubmitReply> {
    if (this.#closed !== undefined) throw new ReachClosedError('client');
    const { submitMaxAttempts, submitRetryTimeoutMs } = this.options;
    return this.#submitWithRetry(
      { ...this.#bodyOf(req), task_id: req.task_id ?? randomUUID() },
      { maxAttempts: submitMaxAttempts, deadline: Date.now() + submitRetryTimeoutMs },
      signal,
    );
  }

  /**
   * `POST /v1/tasks/batch`: many tasks in one request (at most 1000; split larger sets). Resolves
   * with one item per request, in order: `http_status` 202 or 200 with the task's reply fields, or
   * another status with the stable `error` code and `message` (a 429 or 503 item may be sent
   * again). Each task's result arrives on its callback topic, by default this client's, so
   * {@link result} awaits it. Rejects as {@link submit} does when the request as a whole fails.
   */
  async submitBatch(
    reqs: readonly SubmitRequest[],
    signal?: AbortSignal,
  ): Promise<SubmitBatchItem[]> {
    if (this.#closed !== undefined) throw new ReachClosedError('client');
    if (reqs.length === 0) return [];
    if (reqs.length > MAX_BATCH_TASKS)
      throw new RangeError(
        `submitBatch takes at most ${MAX_BATCH_TASKS} tasks, got ${reqs.length}`,
      );
    const bodies = reqs.map((req) => this.#bodyOf(req));
    return postTaskBatch(this.#target(), bodies, signal);
  }

  /**
   * The task's final item (completed, failed or dead) from this client's callback topic. Only
   * tasks submitted with this client's topic can be awaited here. Rejects with a
   * {@link ResultTimeoutError} when it does not arrive in time (the task may still finish).
   */
  result(taskId: string, options: ResultOptions = {}): Promise<FinalCallbackItem> {
    return this.#poller.wait(
      taskId,
      options.timeoutMs ?? this.options.resultTimeoutMs,
      options.signal,
    );
  }

  /**
   * Submits and awaits: resolves with the result value when the task completed, rejects with a
   * {@link TaskFailedError} when it ended failed or dead (then `error` is the dead-letter
   * reason: `max_attempts`, `deadline`, `loop`, `not_retryable`, `no_agent`). A 5xx, a 429 or a
   * lost connection on submit is retried with backoff (same task_id) within the timeout, then
   * rejects with a {@link SubmitFailedError} naming the task_id; other errors are thrown as is.
   */
  async run<T = unknown>(
    capability: string,
    payload: unknown,
    options: RunOptions = {},
  ): Promise<T> {
    if (this.#closed !== undefined) throw new ReachClosedError('client');
    const deadline = Date.now() + (options.timeoutMs ?? this.options.resultTimeoutMs);
    const req: SubmitRequest = { capability, payload };
    if (options.timeoutS !== undefined) req.timeout_s = options.timeoutS;
    if (options.traceId !== undefined) req.trace_id = options.traceId;
    const submitted = await this.#submitWithRetry(
      { ...this.#bodyOf(req), task_id: options.taskId ?? randomUUID() },
      { maxAttempts: Number.POSITIVE_INFINITY, deadline },
      options.signal,
    );
    const item = await this.result(submitted.task_id, {
      ...options,
      timeoutMs: Math.max(0, deadline - Date.now()),
    });
    if (item.status !== 'completed') throw new TaskFailedError({ ...item, status: item.status });
    return item.result as T;
  }

  /** `GET /v1/tasks/:task_id`: the task's state and timeline (404 → {@link ReachHttpError} `TASK_NOT_FOUND`). */
  async getTask(taskId: string, signal?: AbortSignal): Promise<TaskView> {
    const url = joinUrl(this.options.routerUrl, ROUTES.task(taskId));
    const reply = await requestOk({
      method: 'GET',
      url,
      token: this.options.apiKey,
      timeoutMs: this.options.requestTimeoutMs,
      signal,
    });
    return checkReply(TaskView, `GET ${url}`, reply);
  }

  /**
   * Follows `GET /v1/tasks/:task_id/events`: the task's stages, progress values and output
   * chunks in order, as they come, ending after its final stage (completed, dead or cancelled);
   * a finished task's events are replayed. A stream that breaks off is opened again after the
   * last event seen (`Last-Event-ID`), so none is lost or repeated. 404 for a task unknown to
   * this key rejects with a {@link ReachHttpError} `TASK_NOT_FOUND`.
   *
   * ```ts
   * for await (const e of client.events(taskId)) if (e.event === 'chunk') process.stdout.write(e.data.chunk);
   * ```
   */
  events(taskId: string, options: TaskEventsOptions = {}): AsyncGenerator<TaskEventMessage> {
    return followTaskEvents(
      {
        routerUrl: this.options.routerUrl,
        apiKey: this.options.apiKey,
        retry: this.options.pollRetry,
      },
      taskId,
      options,
    );
  }

  /** Stops the poll loop; pending `result()` calls reject with {@link ReachClosedError}. Idempotent. */
  close(): Promise<void> {
    if (this.#closed === undefined) {
      this.#closing.abort();
      this.#closed = this.#poller.close();
    }
    return this.#closed;
  }

  #target(): RouterTarget {
    return {
      routerUrl: this.options.routerUrl,
      timeoutMs: this.options.requestTimeoutMs,
      apiKey: this.options.apiKey,
    };
  }

  #bodyOf(req: SubmitRequest): SubmitBody {
    return { ...req, callback_topic: req.callback_topic ?? this.options.callbackTopic };
  }

  /**
   * Sends `body` until a 2xx or a definite refusal. A 5xx, a 429 or a lost connection says
   * nothing about whether the task was accepted (a 503 can follow a claim that reached Redis),
   * so it is tried again with the same task_id: the router answers a repeat with the existing
   * task. Out of tries, time, or a closed client: {@link SubmitFailedError} with that task_id.
   */
  async #submitWithRetry(
    body: SubmitBody & { task_id: string },
    bounds: { maxAttempts: number; deadline: number },
    signal: AbortSignal | undefined,
  ): Promise<SubmitReply> {
    const backoff = new Backoff(this.options.submitRetry);
    const wake =
      signal === undefined ? this.#closing.signal : AbortSignal.any([signal, this.#closing.signal]);
    for (let attempt = 1; ; attempt++) {
      let failure: ReachHttpError | ReachConnectionError;
      try {
        return await postTask(this.#target(), body, signal);
      } catch (err: unknown) {
        if (!isTransientSubmitError(err)) throw err;
        failure = err;
      }
      const delayMs = backoff.next();
      if (
        attempt >= bounds.maxAttempts ||
        Date.now() + delayMs >= bounds.deadline ||
        this.#closed !== undefined
      )
        throw new SubmitFailedError(body.task_id, attempt, failure);
      this.#log.debug({ err: failure, task_id: body.task_id, delayMs }, 'submit failed; retrying');
      await sleep(delayMs, wake);
      if (signal?.aborted === true) throw abortReason(signal);
      if (this.#closed !== undefined) throw new SubmitFailedError(body.task_id, attempt, failure);
    }
  }

  async #fetchPage(after: string, signal: AbortSignal): Promise<CallbacksReply> {
    const { routerUrl, callbackTopic, pollWaitMs, pollLimit, requestTimeoutMs } = this.options;
    const url = joinUrl(
      routerUrl,
      ROUTES.callbacks(callbackTopic, { after, wait_ms: pollWaitMs, limit: pollLimit }),
    );
    const reply = await requestOk({
      method: 'GET',
      url,
      token: this.options.apiKey,
      timeoutMs: requestTimeoutMs + pollWaitMs,
      signal,
    });
    return checkReply(CallbacksReply, `GET ${url}`, reply);
  }
}
