import {
  decodeTask,
  FailureCode,
  entryShapeProblem,
  placementMiss,
  PROBE_CAPABILITY,
  scopedId,
  splitScopedId,
  type AgentPlacement,
  type TaskMessage,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { startSpan, tracing, type TaskSpan } from '@agent-reach/service-kit/tracing';
import { errorText, failureCodeOf, isRetryable, TaskAbortedError } from '../errors.ts';
import { LruMap } from '../util/lru.ts';
import type { AckTarget, AckWriter, TaskOutcome } from './acks.ts';
import type { EntryParker } from './parking.ts';
import { answerProbe, type HealthCheck } from './probe.ts';
import type { ReadOrigin, StreamEntry } from './redis-util.ts';
import type { ChildResults, TaskSubmitter } from './submitter.ts';
import { HandlerContext, TaskScope, type TaskScopeShared } from './task-scope.ts';
import type { TaskHandler } from './task.ts';

/** What the runner needs from the agent. */
export interface TaskRunnerContext {
  handler: TaskHandler;
  acks: AckWriter;
  /** Sends the tasks handlers submit through `TaskContext.submit()`, and reads their results. */
  submitter: TaskSubmitter & ChildResults;
  /** How many completed task_ids to remember. */
  completedCacheSize: number;
  /** What the agent offers (region, tags, capabilities): a pool task asking for more is left to others. */
  placement: AgentPlacement;
  /** Sets malformed entries aside; without it they are only skipped. */
  parker?: EntryParker;
  logger: Logger;
  /** Clock in epoch ms for deadlines; injectable for tests. */
  now?: () => number;
  /** The agent's deep health check, asked on each probe (the `health` option). */
  health?: HealthCheck;
  /** How long a health check may take before its probe fails. @default 5000 */
  healthTimeoutMs?: number;
}

/** An entry read, with where it was read from. */
export interface Delivery {
  entry: StreamEntry;
  origin: ReadOrigin;
}

interface Running {
  scope: TaskScope;
  outcome: Promise<TaskOutcome> | undefined;
}

const ERROR_TEXT_MAX = 4096;

/**
 * Runs tasks read from a stream: receipt at once, then the handler, then completion or failure
 * with the XACK. Remembers completed task_ids so a task delivered again is answered from memory,
 * and a task delivered again while still running shares the running execution.
 */
export class TaskRunner {
  readonly #completed: LruMap<string, string>;
  /** Tasks cancelled (a control notice): aborted if running, never started if read later. */
  readonly #cancelled: LruMap<string, true>;
  readonly #running = new Map<string, Running>();
  readonly #now: () => number;
  /** What every task's scope shares. */
  readonly #shared: TaskScopeShared;

  constructor(private readonly ctx: TaskRunnerContext) {
    this.#completed = new LruMap(ctx.completedCacheSize);
    this.#cancelled = new LruMap(ctx.completedCacheSize);
    this.#now = ctx.now ?? Date.now;
    this.#shared = {
      acks: ctx.acks,
      submitter: ctx.submitter,
      logger: ctx.logger,
      now: this.#now,
    };
  }

  /** Tasks whose handler is running now. */
  get running(): number {
    return this.#running.size;
  }

  /** The ids of the tasks whose handler is running now (their leases are renewed). */
  runningTaskIds(): string[] {
    return [...this.#running.keys()];
  }

  /**
   * Takes one read batch (entries of the inbox and pools alike). Returns one promise per entry
   * that settles (never rejects) once the entry is fully handled — acks written and XACKed on the
   * stream it came from — so the caller can free its slot.
   */
  accept(batch: readonly Delivery[]): Promise<void>[] {
    const tasks: { entry: StreamEntry; task: TaskMessage; target: AckTarget }[] = [];
    const done: Promise<void>[] = [];
    for (const { entry, origin } of batch) {
      // A trimmed entry (read again from the pending list after it was deleted) is only skipped;
      // one of the wrong shape or fields is also parked where an operator can see it.
      const problem = entry.fields === null ? undefined : entryShapeProblem(entry.fields);
      const decoded =
        entry.fields === null
          ? { ok: false as const, error: 'entry was trimmed' }
          : problem !== undefined
            ? { ok: false as const, error: problem }
            : decodeTask(entry.fields);
      if (!decoded.ok) {
        this.ctx.logger.error(
          { messageId: entry.id, stream: origin.stream, reason: decoded.error },
          'undecodable task entry; acknowledged and skipped',
        );
        const parked =
          entry.fields === null ? undefined : this.ctx.parker?.park(origin, entry, decoded.error);
        done.push(
          Promise.all([parked, this.ctx.acks.drop(origin, entry.id)]).then(() => undefined),
        );
        continue;
      }
      const task = decoded.value;
      if (origin.kind === 'pool' && this.#release(entry, task, origin)) {
        done.push(Promise.resolve());
        continue;
      }
      const target: AckTarget = {
        taskId: task.task_id,
        attempt: task.attempt,
        messageId: entry.id,
        origin,
        capability: task.capability,
      };
      // A pool is a tenant's capability's (`<tenant>/<capability>`, the task's tenant): the server
      // finds the pool entry from the pool id and the entry's id.
      if (origin.kind === 'pool')
        target.pool = scopedId(splitScopedId(task.task_id).tenant, task.capability);
      tasks.push({ entry, task, target });
    }
    // The batch's receipts leave together one tick after the read, handlers already started: a
    // task that ended by then (a fast handler, a probe, a remembered result) reports its receipt
    // with its final ack instead — one ack and one server step less.
    const readAt = performance.now();
    for (const { target } of tasks) {
      target.receipt = 'pending';
      target.readAt = readAt;
    }
    const receipts = new Promise<void>((resolve) => {
      setImmediate(() => {
        const due = tasks.map((t) => t.target).filter((t) => t.receipt === 'pending');
        for (const t of due) t.receipt = 'sent';
        resolve(this.ctx.acks.receipts(due));
      });
    });
    for (const { entry, task, target } of tasks)
      done.push(this.#handle(entry, task, target, receipts));
    return done;
  }

  /**
   * A pool task this agent may not take (a strict region of elsewhere, a tag it lacks) is not
   * run and not reported: its entry is released unacknowledged (AckWriter.release) and its slot
   * is freed at once, so an agent that may take it gets it. Tasks from the agent's own inbox are
   * not checked: the router chose this agent for them, by the same rule (and may have chosen it
   * outside a preferred region).
   */
  #release(entry: StreamEntry, task: TaskMessage, origin: ReadOrigin): boolean {
    const miss = placementMiss(task, this.ctx.placement);
    if (miss === undefined) return false;
    this.ctx.logger.debug(
      { task_id: task.task_id, messageId: entry.id, stream: origin.stream, miss },
      'pool task this agent may not take; released for another',
    );
    void this.ctx.acks.release(origin, entry.id);
    return true;
  }

  /**
   * The task was cancelled: its running handler's `signal` aborts (reason a TaskAbortedError
   * `cancelled`), and if it is read later it is not run. Its failure ack, refused by the server,
   * frees the slot there and records when the agent stopped.
   */
  cancel(taskId: string): void {
    this.#cancelled.set(taskId, true);
    const run = this.#running.get(taskId);
    if (run === undefined) return;
    this.ctx.logger.info({ task_id: taskId }, 'task cancelled; aborting its handler');
    run.scope.abort('cancelled');
  }

  /** Aborts every running handler's signal (forced shutdown). */
  abortAll(): void {
    for (const run of this.#running.values()) run.scope.abort('shutdown');
  }

  /** The remembered result JSON text of a completed task, if still remembered. */
  completedResult(taskId: string): string | undefined {
    return this.#completed.get(taskId);
  }

  async #handle(
    entry: StreamEntry,
    task: TaskMessage,
    target: AckTarget,
    receipts: Promise<void>,
  ): Promise<void> {
    // Its child logger, output and signal are made only when something asks for them.
    const scope = new TaskScope(this.#shared, task, target, receipts);
    // While spans are exported: receive (a child of the entry's deliver span) → handle, ack.
    // Liveness probes are left out: they are no caller's task.
    const received =
      tracing.on && task.capability !== PROBE_CAPABILITY ? receiveSpan(task) : undefined;
    const handling = received && childSpan('handle', received, task);
    let outcome: TaskOutcome;
    try {
      outcome = await this.#outcome(entry, task, scope, handling?.traceparent);
    } catch (err: unknown) {
      // #outcome catches handler errors itself; this only guards against bugs here.
      scope.log().error({ err }, 'task runner failed');
      outcome = { stage: 'failed', error: errorText(err), retryable: true };
    }
    if (handling !== undefined) {
      if (outcome.stage === 'failed') handling.fail(outcome.error);
      handling.end();
    }
    const output = scope.usedOutput;
    // A task with output keeps its receipt: output acks must not come before it.
    if (target.receipt === 'pending' && output === undefined) target.receipt = 'folded';
    // A receipt sent must land before the completion on the acks stream, and so must the output.
    else await receipts;
    if (output !== undefined) await output.close();
    if (received === undefined) {
      await this.ctx.acks.finish(target, outcome);
    } else {
      const acking = childSpan('ack', received, task, 'producer');
      target.traceparent = acking.traceparent;
      try {
        await this.ctx.acks.finish(target, outcome);
      } finally {
        acking.end();
        received.end();
      }
    }
    if (this.ctx.logger.isLevelEnabled('debug'))
      scope.log().debug({ stage: outcome.stage, durationMs: outcome.durationMs }, 'task finished');
  }

  #outcome(
    entry: StreamEntry,
    task: TaskMessage,
    scope: TaskScope,
    traceparent?: string,
  ): Promise<TaskOutcome> {
    if (task.capability === PROBE_CAPABILITY)
      return answerProbe(
        task,
        () => scope.log(),
        this.ctx.health,
        this.ctx.healthTimeoutMs ?? 5000,
      );
    const remembered = this.#completed.get(task.task_id);
    if (remembered !== undefined) {
      scope
        .log()
        .info('task already completed here; reporting the remembered result without running it');
      // duration_ms measures the handler, and it did not run.
      return Promise.resolve({ stage: 'completed', result: remembered, durationMs: 0 });
    }
    if (this.#cancelled.get(task.task_id) !== undefined) {
      scope.log().info('task cancelled before it started; not running');
      return Promise.resolve({
        stage: 'failed',
        error: new TaskAbortedError(task.task_id, 'cancelled').message,
        retryable: false,
      });
    }
    const running = this.#running.get(task.task_id);
    if (running?.outcome !== undefined) {
      scope.log().info('task delivered again while running here; sharing the running execution');
      return running.outcome;
    }
    if (task.deadline_ms > 0 && this.#now() >= task.deadline_ms) {
      scope
        .log()
        .warn({ deadlineMs: task.deadline_ms }, 'deadline passed before start; not running');
      return Promise.resolve({
        stage: 'failed',
        error: new TaskAbortedError(task.task_id, 'deadline').message,
        errorCode: FailureCode.deadlineExceeded,
        retryable: false,
      });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(task.payload);
    } catch {
      return Promise.resolve({
        stage: 'failed',
        error: 'payload is not valid JSON text',
        errorCode: FailureCode.invalidPayload,
        retryable: false,
      });
    }
    // Listed before the handler starts: a handler that throws at once ends (and is forgotten)
    // before #execute returns.
    const run: Running = { scope, outcome: undefined };
    this.#running.set(task.task_id, run);
    run.outcome = this.#execute(entry, task, payload, scope, traceparent);
    return run.outcome;
  }

  async #execute(
    entry: StreamEntry,
    task: TaskMessage,
    payload: unknown,
    scope: TaskScope,
    /** The `handle` span's, while spans are exported: a child task's `submit` span is its child. */
    traceparent?: string,
  ): Promise<TaskOutcome> {
    const started = performance.now();
    try {
      const value = await this.ctx.handler(
        new HandlerContext(scope, entry.id, payload, traceparent),
      );
      const durationMs = Math.round(performance.now() - started);
      let result: string;
      try {
        // undefined (a handler with no return value) is reported as null.
        result = JSON.stringify(value) ?? 'null';
      } catch (err: unknown) {
        return {
          stage: 'failed',
          error: `result is not JSON-serialisable: ${errorText(err)}`,
          errorCode: FailureCode.resultNotJson,
          retryable: false,
          durationMs,
        };
      }
      this.#completed.set(task.task_id, result);
      return { stage: 'completed', result, durationMs };
    } catch (err: unknown) {
      const durationMs = Math.round(performance.now() - started);
      const reason = scope.abortReason();
      // A handler that gave up because its signal fired often throws a generic AbortError;
      // the signal's reason says whether running again can help.
      const abortedForGood = reason instanceof TaskAbortedError && !reason.retryable;
      const retryable = !abortedForGood && isRetryable(err);
      scope.log().warn({ err, retryable, durationMs }, 'handler failed');
      return {
        stage: 'failed',
        error: errorText(err).slice(0, ERROR_TEXT_MAX),
        // A handler that gave up on its fired signal fails with the signal's code (a deadline).
        errorCode: failureCodeOf(reason instanceof TaskAbortedError ? reason : err),
        retryable,
        durationMs,
      };
    } finally {
      scope.end();
      this.#running.delete(task.task_id);
    }
  }
}

/** The span of a task's handling here: a child of the span that delivered its entry. */
function receiveSpan(task: TaskMessage): TaskSpan {
  return startSpan('receive', {
    parent: task.traceparent,
    traceId: task.trace_id,
    kind: 'consumer',
    attributes: {
      'reach.task_id': task.task_id,
      'reach.capability': task.capability,
      'reach.attempt': task.attempt,
    },
  });
}

function childSpan(
  name: string,
  parent: TaskSpan,
  task: TaskMessage,
  kind: 'internal' | 'producer' = 'internal',
): TaskSpan {
  return startSpan(name, {
    parent: parent.traceparent,
    kind,
    attributes: { 'reach.task_id': task.task_id, 'reach.attempt': task.attempt },
  });
}
