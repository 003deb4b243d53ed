import type { TaskMessage } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { TaskAbortedError } from '../errors.ts';
import type { AckTarget, AckWriter } from './acks.ts';
import { submitChild, type ChildTask, type ChildTaskRequest } from './child-task.ts';
import { TaskOutput } from './output.ts';
import type { ChildResults, TaskSubmitter } from './submitter.ts';
import type { TaskContext } from './task.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;

/** What every task's scope shares: the runner's. */
export interface TaskScopeShared {
  acks: AckWriter;
  /** Sends the tasks handlers submit, and reads their results. */
  submitter: TaskSubmitter & ChildResults;
  logger: Logger;
  /** Clock in epoch ms for deadlines. */
  now: () => number;
}

/**
 * One task's handling: its logger, output and abort signal, each made the first time something
 * asks for it. A task whose handler logs nothing, reports no output and never looks at its
 * signal — most of them — pays for none of the three: no child logger, no AbortController, no
 * deadline timer.
 */
export class TaskScope {
  #logger: Logger | undefined;
  #output: TaskOutput | undefined;
  #controller: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The handler has returned: no deadline timer is started any more. */
  #ended = false;

  constructor(
    private readonly shared: TaskScopeShared,
    readonly task: TaskMessage,
    readonly target: AckTarget,
    /** Resolves once the batch's receipts are written: output never overtakes its receipt. */
    private readonly receipts: Promise<void>,
  ) {}

  /** The task's child logger (task_id, attempt, trace_id). */
  log(): Logger {
    if (this.#logger === undefined) {
      const { task } = this;
      this.#logger = this.shared.logger.child(
        task.trace_id
          ? { task_id: task.task_id, attempt: task.attempt, trace_id: task.trace_id }
          : { task_id: task.task_id, attempt: task.attempt },
      );
    }
    return this.#logger;
  }

  /** The task's output, made on the handler's first `progress()` or `stream()`. */
  output(): TaskOutput {
    this.#output ??= new TaskOutput({
      acks: this.shared.acks,
      target: this.target,
      receipt: () => this.receipts,
      logger: () => this.log(),
    });
    return this.#output;
  }

  /** The output, if the handler reported any. */
  get usedOutput(): TaskOutput | undefined {
    return this.#output;
  }

  /**
   * The handler's signal: aborted at the task's deadline (while the handler runs), at a cancel
   * and at a forced shutdown, its reason a {@link TaskAbortedError}.
   */
  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      const deadlineMs = this.task.deadline_ms;
      if (deadlineMs > 0 && !this.#ended) {
        // setTimeout fires at once for delays past 2^31-1 ms; deadlines are at most days away anyway.
        const delayMs = Math.min(deadlineMs - this.shared.now(), MAX_TIMER_MS);
        this.#timer = setTimeout(() => this.abort('deadline'), delayMs);
      }
    }
    return this.#controller.signal;
  }

  /** Aborts the signal (made now if nobody asked for it yet), unless it already was. */
  abort(why: 'cancelled' | 'shutdown' | 'deadline'): void {
    const signal = this.signal();
    if (!signal.aborted) this.#controller?.abort(new TaskAbortedError(this.task.task_id, why));
  }

  /**
   * Why the handler was told to stop, if it was: the signal's reason, or — when nobody asked for
   * the signal, so no timer ran — the deadline, once it has passed.
   */
  abortReason(): unknown {
    if (this.#controller !== undefined) return this.#controller.signal.reason;
    const deadlineMs = this.task.deadline_ms;
    return deadlineMs > 0 && this.shared.now() >= deadlineMs
      ? new TaskAbortedError(this.task.task_id, 'deadline')
      : undefined;
  }

  /**
   * Submits a child task, cancelled with this task's signal (`TaskContext.submit`).
   * @param traceparent - the `handle` span's, while spans are exported
   */
  submit(req: ChildTaskRequest, signal: AbortSignal | undefined, traceparent?: string): ChildTask {
    return submitChild(this.shared.submitter, this.task, req, this.signal(), signal, traceparent);
  }

  /** The handler has returned: its deadline timer stops. */
  end(): void {
    this.#ended = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The {@link TaskContext} a handler gets. A class, not an object literal: V8 builds a literal
 * with getters property by property, some microseconds for every task, where a class instance
 * takes tens of nanoseconds. `signal` and `logger` are getters of the class (made on first use);
 * the methods are own functions, so a handler may destructure them (`{ progress }`).
 */
export class HandlerContext implements TaskContext {
  readonly taskId: string;
  readonly capability: string;
  readonly payload: unknown;
  readonly attempt: number;
  readonly traceId: string;
  readonly parentTaskId: string | undefined;
  readonly hops: number;
  readonly deadlineMs: number;
  readonly messageId: string;
  readonly shadow: boolean;
  readonly submit: TaskContext['submit'];
  readonly progress: TaskContext['progress'];
  readonly stream: TaskContext['stream'];
  readonly #scope: TaskScope;

  /** @param traceparent - the `handle` span's, while spans are exported: a child's `submit` span is its child */
  constructor(scope: TaskScope, messageId: string, payload: unknown, traceparent?: string) {
    const { task } = scope;
    this.#scope = scope;
    this.taskId = task.task_id;
    this.capability = task.capability;
    this.payload = payload;
    this.attempt = task.attempt;
    this.traceId = task.trace_id;
    this.parentTaskId = task.parent_task_id;
    this.hops = task.hops ?? 0;
    this.deadlineMs = task.deadline_ms;
    this.messageId = messageId;
    this.shadow = task.shadow === true;
    this.submit = (req, signal) => scope.submit(req, signal, traceparent);
    this.progress = (value) => scope.output().progress(value);
    this.stream = (chunk) => scope.output().stream(chunk);
  }

  get signal(): AbortSignal {
    return this.#scope.signal();
  }

  get logger(): Logger {
    return this.#scope.log();
  }
}
