import type { Logger } from 'pino';

/** What a handler gets for one task. */
export interface TaskContext {
  /** The task's id; a task delivered again keeps it. */
  readonly taskId: string;
  /** Capability the task was sent for. */
  readonly capability: string;
  /** The caller's payload, parsed from JSON. */
  readonly payload: unknown;
  /** 1 for the first delivery, higher for retries. */
  readonly attempt: number;
  /** Trace id to propagate to tasks this handler submits. */
  readonly traceId: string;
  /** Epoch milliseconds after which the result is no longer wanted; 0 for none. */
  readonly deadlineMs: number;
  /** Stream entry id the task was read from. */
  readonly messageId: string;
  /**
   * Aborted when the deadline passes or when a shutdown runs out of time; its `reason` is a
   * `TaskAbortedError`. Pass it to fetch() and friends.
   */
  readonly signal: AbortSignal;
  /** Logger bound to this task's id and attempt. */
  readonly logger: Logger;
}

/** Runs one task; the resolved value (anything JSON-serialisable) is the task's result. */
export type TaskHandler = (task: TaskContext) => Promise<unknown>;
