import { randomBytes } from 'node:crypto';
import {
  CallbacksReply,
  ROUTES,
  TaskView,
  type CallbackItem,
  type SubmitBody,
  type SubmitReply,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { CallbackPoller } from '../client/callbacks.ts';
import { postTask, type RouterTarget } from '../client/router-api.ts';
import { compileBackoff } from '../util/backoff.ts';
import { checkReply } from '../util/check.ts';
import { joinUrl, requestOk } from '../util/http.ts';

/** Sends a task to a router; `ReachClient` has this shape too. */
export interface TaskSubmitter {
  /** `traceparent`: the submitting handler's span, sent as the request's header. */
  submit(body: SubmitBody, signal?: AbortSignal, traceparent?: string): Promise<SubmitReply>;
}

/**
 * Where a child's result is read: its final item on the topic children are submitted with (one
 * long-poll loop per agent, only while someone waits), or its state when the request named a
 * topic of its own.
 */
export interface ChildResults {
  /** The callback topic a child gets when its request names none. */
  readonly topic: string;
  /** The child's final item on {@link topic}. */
  item(taskId: string, timeoutMs: number, signal: AbortSignal): Promise<CallbackItem>;
  /** `GET /v1/tasks/:task_id`. */
  view(taskId: string, signal: AbortSignal): Promise<TaskView>;
}

/** How long one long poll of the children's topic waits on the router, ms. */
const POLL_WAIT_MS = 10_000;
/** Final items kept for a `result()` not called yet. */
const MAX_BUFFERED_RESULTS = 1000;

/**
 * The agent's own submitter: posts the body as is, and reads its children's results from a
 * callback topic of this agent instance's (`children.<random>`), by one long poll on the router
 * (`GET /v1/callbacks/:topic`) that runs only while a handler awaits a `result()`.
 */
export class RouterSubmitter implements TaskSubmitter, ChildResults {
  /** The topic this agent's children are submitted with when their request names none. */
  readonly topic = `children.${randomBytes(8).toString('hex')}`;
  readonly #poller: CallbackPoller;

  constructor(
    private readonly target: RouterTarget,
    logger: Logger,
  ) {
    this.#poller = new CallbackPoller({
      fetchPage: (after, signal) => this.#page(after, signal),
      maxBuffered: MAX_BUFFERED_RESULTS,
      retry: compileBackoff({}, { baseMs: 250, capMs: 5000, jitter: 0.2 }),
      logger: logger.child({ callback_topic: this.topic }),
    });
  }

  /** `POST /v1/tasks`. */
  submit(body: SubmitBody, signal?: AbortSignal, traceparent?: string): Promise<SubmitReply> {
    return postTask(this.target, body, signal, traceparent);
  }

  /** The child's final item on {@link topic}. */
  item(taskId: string, timeoutMs: number, signal: AbortSignal): Promise<CallbackItem> {
    return this.#poller.wait(taskId, timeoutMs, signal);
  }

  /** `GET /v1/tasks/:task_id`. */
  async view(taskId: string, signal: AbortSignal): Promise<TaskView> {
    const url = joinUrl(this.target.routerUrl, ROUTES.task(taskId));
    const reply = await requestOk({
      method: 'GET',
      url,
      token: this.target.apiKey,
      timeoutMs: this.target.timeoutMs,
      signal,
    });
    return checkReply(TaskView, `GET ${url}`, reply);
  }

  /** Stops the poll loop (a wait still open rejects with `ReachClosedError`). Idempotent. */
  close(): Promise<void> {
    return this.#poller.close();
  }

  async #page(after: string, signal: AbortSignal): Promise<CallbacksReply> {
    const url = joinUrl(
      this.target.routerUrl,
      ROUTES.callbacks(this.topic, { after, wait_ms: POLL_WAIT_MS, limit: 100 }),
    );
    const reply = await requestOk({
      method: 'GET',
      url,
      token: this.target.apiKey,
      timeoutMs: this.target.timeoutMs + POLL_WAIT_MS,
      signal,
    });
    return checkReply(CallbacksReply, `GET ${url}`, reply);
  }
}
