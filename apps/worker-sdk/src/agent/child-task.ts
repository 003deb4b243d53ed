import {
  FINAL_TASK_STATUSES,
  type CallbackItem,
  type SubmitBody,
  type SubmitReply,
  type TaskMessage,
} from '@agent-reach/protocol';
import { ResultTimeoutError, TaskFailedError } from '../errors.ts';
import { abortReason, sleep } from '../util/sleep.ts';
import type { ChildResults, TaskSubmitter } from './submitter.ts';

/**
 * A task a handler submits while handling another: `parent_task_id` and `trace_id` are not
 * given, they are set from the task being handled.
 */
export type ChildTaskRequest = Omit<SubmitBody, 'parent_task_id' | 'trace_id'>;

/** Options of {@link ChildTask.result}. */
export interface ChildResultOptions {
  /**
   * Longest wait, ms; then a `ResultTimeoutError` (the child may still finish).
   * @default no limit of its own: the parent's deadline or cancel ends the wait, and the child's
   * own deadline (at most the parent's less the router's margin) ends the child
   */
  timeoutMs?: number;
  /** Stops waiting (rejects with the signal's reason). @default none */
  signal?: AbortSignal;
}

/**
 * What `TaskContext.submit()` returns: awaiting it gives the router's submit reply, as before;
 * {@link ChildTask.result} waits for the child's result.
 */
export interface ChildTask extends Promise<SubmitReply> {
  /**
   * Resolves with the child's result value once it completed. Rejects with the submission's
   * error (a `ReachHttpError` such as `NO_AGENT` or `PARENT_DEADLINE_NEAR`), a
   * `TaskFailedError` when the child ended `dead` (its `error` is the dead-letter reason:
   * `deadline`, `max_attempts`, `loop`, `not_retryable`, `no_agent`) or `cancelled`, the
   * parent's `TaskAbortedError` when the parent's own signal fires (its deadline, or a cancel,
   * which the router passes on to the children), a `ResultTimeoutError` past `timeoutMs`.
   */
  result<T = unknown>(options?: ChildResultOptions): Promise<T>;
}

/**
 * The body of a task submitted while handling `parent`: the parent's id and trace are set last,
 * so a request cannot drop them (they are how the router's loop guard follows the chain).
 */
export function childTaskBody(
  req: ChildTaskRequest,
  parent: Pick<TaskMessage, 'task_id' | 'trace_id'>,
): SubmitBody {
  const body: SubmitBody = { ...req, parent_task_id: parent.task_id };
  // An entry without a trace (a hand-written router, say) lets the router make one.
  if (parent.trace_id !== '') body.trace_id = parent.trace_id;
  else delete body.trace_id;
  return body;
}

/** setTimeout's longest delay: the stand-in for "no limit". */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Polling a child's state (a topic of its own): first and longest gap. */
const VIEW_POLL_MS = { first: 100, max: 2000 };

/**
 * Submits `req` on behalf of `parent` (childTaskBody: its id and trace) and returns the handle.
 * The submission starts at once, as before; `parentSignal` (the handler's) and `signal` cancel
 * it. Without a `callback_topic` of the request's own, the child is submitted with the agent's
 * (`via.topic`), where its result is awaited.
 */
export function submitChild(
  via: TaskSubmitter & ChildResults,
  parent: Pick<TaskMessage, 'task_id' | 'trace_id'>,
  req: ChildTaskRequest,
  parentSignal: AbortSignal,
  signal?: AbortSignal,
  /** The parent's `handle` span while spans are exported: the child's `submit` is its child. */
  traceparent?: string,
): ChildTask {
  const ownTopic = req.callback_topic !== undefined;
  const body = childTaskBody(ownTopic ? req : { ...req, callback_topic: via.topic }, parent);
  const submitted = via.submit(
    body,
    signal === undefined ? parentSignal : AbortSignal.any([parentSignal, signal]),
    traceparent,
  );
  const result = async <T>(options: ChildResultOptions = {}): Promise<T> => {
    const reply = await submitted;
    const stop =
      options.signal === undefined ? parentSignal : AbortSignal.any([parentSignal, options.signal]);
    const timeoutMs = Math.min(options.timeoutMs ?? MAX_TIMER_MS, MAX_TIMER_MS);
    const item = ownTopic
      ? await finalFromView(via, reply.task_id, timeoutMs, stop)
      : await via.item(reply.task_id, timeoutMs, stop);
    if (item.status === 'completed') return item.result as T;
    if (item.status === 'failed' || item.status === 'dead' || item.status === 'cancelled')
      throw new TaskFailedError({ ...item, status: item.status });
    // Not final (a stream's progress item): the topic reader hands over final items only.
    throw new Error(`child task ${reply.task_id} reported ${item.status} as its result`);
  };
  const handle: ChildTask = Object.assign(submitted, { result });
  return handle;
}

/** Polls the child's state until it is final, as the callback item it would have published. */
async function finalFromView(
  results: ChildResults,
  taskId: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<CallbackItem> {
  const until = Date.now() + timeoutMs;
  let gapMs = VIEW_POLL_MS.first;
  for (;;) {
    const view = await results.view(taskId, signal);
    if (FINAL_TASK_STATUSES.includes(view.status)) {
      const item: CallbackItem = {
        id: '',
        task_id: view.task_id,
        status: view.status as 'completed' | 'dead' | 'cancelled',
        capability: view.capability,
        agent_id: view.agent_id,
        attempt: view.attempts,
        completed_at: view.timeline.at(-1)?.at ?? 0,
      };
      if (view.result !== undefined) item.result = view.result;
      // A dead task's error is its dead-letter reason, as on a callback topic.
      const error = view.status === 'dead' ? (view.dead_reason ?? view.error) : view.error;
      if (error !== undefined) item.error = error;
      return item;
    }
    if (Date.now() + gapMs > until) throw new ResultTimeoutError(taskId, timeoutMs);
    await sleep(gapMs, signal);
    if (signal.aborted) throw abortReason(signal);
    gapMs = Math.min(gapMs * 2, VIEW_POLL_MS.max);
  }
}
