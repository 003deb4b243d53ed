import type { Logger } from 'pino';
import type { ChildTask, ChildTaskRequest } from './child-task.ts';

/**
 * What a handler gets for one task. `signal` and `logger` are getters, each made the first time
 * it is read (a handler that never reads them costs nothing for them): read them from the
 * context or destructure them; a spread copy (`{ ...ctx }`) does not carry them.
 */
export interface TaskContext {
  /** The task's id; a task delivered again keeps it. */
  readonly taskId: string;
  /** Capability the task was sent for. */
  readonly capability: string;
  /** The caller's payload, parsed from JSON. */
  readonly payload: unknown;
  /** 1 for the first delivery, higher for retries. */
  readonly attempt: number;
  /** Trace id; {@link TaskContext.submit} passes it on to the tasks this handler submits. */
  readonly traceId: string;
  /** The task during whose handling this one was submitted; undefined for a caller's own task. */
  readonly parentTaskId: string | undefined;
  /**
   * How many submissions deep this task is: 0 for a caller's own task, 1 for a task submitted
   * while handling one, and so on. The router dead-letters a task past its hop limit (`loop`).
   */
  readonly hops: number;
  /** Epoch milliseconds after which the result is no longer wanted; 0 for none. */
  readonly deadlineMs: number;
  /** Stream entry id the task was read from. */
  readonly messageId: string;
  /**
   * A shadow copy: the agent runs in observation mode (`observe: true`) and this is a real task
   * mirrored to it, whose result is compared with the serving agent's and reaches no caller
   * (docs/PROTOCOL.md §7). Skip side effects (emails, writes) on one. False for every other task.
   */
  readonly shadow: boolean;
  /**
   * Aborted when the deadline passes or when a shutdown runs out of time; its `reason` is a
   * `TaskAbortedError`. Pass it to fetch() and friends.
   */
  readonly signal: AbortSignal;
  /** Logger bound to this task's id and attempt. */
  readonly logger: Logger;
  /**
   * Submits a task on behalf of this one: `POST /v1/tasks` to the agent's `routerUrl`, with
   * `parent_task_id` set to this task's id and `trace_id` to this trace, so the router can tell
   * a loop (an agent already on the trace, or too many hops) and dead-letter it with reason
   * `loop`. Cancelled by this task's `signal` and by
   * `signal` when given. Tried once, unlike `ReachClient.submit()`: an error reply rejects with
   * `ReachHttpError`, and a 5xx or 429 reply names the task_id to submit again with (pass a
   * `task_id` of your own to make a repeat safe whatever happens).
   *
   * Awaiting the returned {@link ChildTask} gives the submit reply; `await ctx.submit(req).result()`
   * waits for the child's result (see `ChildTask.result`). Unless `req` names a topic, the child
   * goes to this agent's own callback topic, where that result is read. The router gives the
   * child at most this task's time left less its margin (`REACH_CHILD_MARGIN_MS`, 5 s by
   * default), and refuses it with `PARENT_DEADLINE_NEAR` when less than that is left.
   */
  submit(req: ChildTaskRequest, signal?: AbortSignal): ChildTask;
  /**
   * Reports progress: any JSON value up to 4 KiB as JSON (a fraction, a percentage, an object).
   * Followers of `GET /v1/tasks/:id/events` get it as a `progress` event, and the callback topic
   * as a `progress` item when the task was submitted with `stream: true`. Values given within
   * 20 ms are sent as the last of them; everything is sent before the task's result.
   */
  progress(value: unknown): void;
  /**
   * Appends a chunk of output text (an LLM's tokens, a log line): a `chunk` event for followers,
   * a `chunk` item on the topic with `stream: true`. Chunks given within 20 ms leave in one ack,
   * in order, before the task's result. Past the server's bound per task (REACH_STREAM_MAX_CHUNKS
   * / REACH_STREAM_MAX_BYTES) later chunks are dropped and one `truncated` event says so; the
   * task goes on.
   */
  stream(chunk: string): void;
}

/** Runs one task; the resolved value (anything JSON-serialisable) is the task's result. */
export type TaskHandler = (task: TaskContext) => Promise<unknown>;
