import type { EventSink } from '@agent-reach/events';
import type { DueWatch } from '../due-watch.ts';
import { constraintArgs, type TaskSpec } from '../task/task-spec.ts';
import type { HoldBatch } from './hold-batch.ts';

/** Where a hold writes: the due entries, and the tick's hold calls. */
export interface HoldPath {
  watch: DueWatch;
  holds: HoldBatch;
}

/** A task to hold until its time. */
export interface HoldRequest {
  task: TaskSpec;
  /** Identifies this submission across re-sent commands. */
  nonce: string;
  /** When to send it, epoch ms. */
  runAt: number;
  /** The task's timeout, counted from `runAt` (0 for none). */
  timeoutMs: number;
  /** Now, epoch ms: the task's `created_at`. */
  now: number;
  /**
   * `queued`: the task waits in its capability's waiting room (room/queue-task.ts), its due entry
   * at `watchAt` (its deadline in the room). @default 'delayed'
   */
  status?: 'delayed' | 'queued';
  /** The due entry's score. @default runAt */
  watchAt?: number;
}

/** What holding did: a new `delayed` task, or the task_id was taken by an earlier submission. */
export type HoldOutcome = 'held' | 'exists';

/**
 * Stores a task that waits for its time (`delay_ms`, `run_at`, a schedule's tick) as `delayed`
 * (hold-n.lua, in the tick's call for its task shard: send/hold-batch.ts) and puts its due entry in the due set: the watchdog member `#<task_id>` scored at
 * `runAt`, in the same write as the script and just before it (due-watch.ts), so the task is never
 * stored without the entry that sends it. A repeated task_id changes nothing (`ZADD NX` keeps an
 * earlier entry; the script keeps the task). Registry-sync's due processor sends it through the
 * task sender once due: no send happens here.
 */
export async function holdTask(
  path: HoldPath,
  events: EventSink,
  h: HoldRequest,
): Promise<HoldOutcome> {
  const t = h.task;
  const status = h.status ?? 'delayed';
  const reply = await path.watch.watchThen(t.taskId, h.watchAt ?? h.runAt, () =>
    path.holds.hold({
      nonce: h.nonce,
      taskId: t.taskId,
      capability: t.capability,
      payload: t.payload,
      callbackTopic: t.callbackTopic,
      traceId: t.traceId,
      timeoutMs: h.timeoutMs,
      runAt: h.runAt,
      now: h.now,
      status,
      constraints: constraintArgs(t).flatMap((f) => [f.field, f.value]),
    }),
  );
  if (reply === 'exists') return 'exists';
  if (reply === 'created' && status === 'delayed') {
    events.write({
      stage: 'delayed',
      capability: t.capability,
      // No agent yet (an InfluxDB tag cannot be empty).
      agent_id: 'none',
      task_id: t.taskId,
      attempt: 1,
      at: h.now,
      reason: `until=${h.runAt}`,
      ...(t.traceId ? { trace_id: t.traceId } : {}),
    });
  }
  return 'held';
}
