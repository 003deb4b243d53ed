import { DEFAULT_TENANT } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import { holdTask, type HoldPath } from '../send/hold.ts';
import type { TaskSpec } from '../task/task-spec.ts';
import type { WaitingRoom } from './waiting-room.ts';

/** A submission that found no free slot, to wait in its capability's room. */
export interface QueueRequest {
  task: TaskSpec;
  /** Identifies this submission across re-sent commands. */
  nonce: string;
  /** Epoch ms: the task's `created_at`. */
  now: number;
  /** The task's deadline from now, ms (> 0): its wait in the room and its run both count. */
  timeoutMs: number;
  /** '' for none. */
  fairnessKey: string;
  tenantWeight: number;
  keyWeight: number;
  /** Most tasks of the tenant waiting in the room. */
  maxTenant: number;
  /** Most tasks waiting in the room. */
  maxTotal: number;
  /** Most slots of the capability the tenant holds at once; 0 for no bound. */
  maxInflight: number;
}

/** What queueing did. */
export type QueueOutcome =
  | { kind: 'queued'; ahead: number }
  /** The task_id belongs to an earlier submission. */
  | { kind: 'exists' }
  | { kind: 'tenant_full'; waiting: number }
  | { kind: 'room_full'; waiting: number };

/**
 * Puts a submission in its capability's waiting room (room-enqueue-1.lua), then stores it as a
 * `queued` task with its due entry at its deadline (send/hold.ts), where registry-sync
 * dead-letters it should it still wait then. A drainer that takes it before it is stored gives it
 * back. A task_id that belongs to an earlier submission leaves the room again.
 */
export async function queueTask(
  path: HoldPath,
  events: EventSink,
  room: WaitingRoom,
  q: QueueRequest,
): Promise<QueueOutcome> {
  const t = q.task;
  const entered = await room.enter(t.capability, {
    taskId: t.taskId,
    // The default tenant's tasks store '' (task-spec.ts): the room names it.
    tenant: t.tenant || DEFAULT_TENANT,
    fairnessKey: q.fairnessKey,
    tenantWeight: q.tenantWeight,
    keyWeight: q.keyWeight,
    priority: t.priority,
    now: q.now,
    maxTenant: q.maxTenant,
    maxTotal: q.maxTotal,
    maxInflight: q.maxInflight,
  });
  if (entered.kind === 'tenant_full' || entered.kind === 'room_full') return entered;
  const held = await holdTask(path, events, {
    task: t,
    nonce: q.nonce,
    runAt: q.now,
    timeoutMs: q.timeoutMs,
    now: q.now,
    status: 'queued',
    watchAt: q.now + q.timeoutMs,
  });
  if (held === 'exists') {
    if (entered.kind === 'queued') await room.leave(t.capability, t.taskId);
    return { kind: 'exists' };
  }
  const ahead = entered.kind === 'queued' ? entered.ahead : 0;
  events.write({
    stage: 'queued',
    capability: t.capability,
    agent_id: 'none',
    task_id: t.taskId,
    attempt: 1,
    at: q.now,
    reason: `ahead=${ahead}`,
    ...(t.traceId ? { trace_id: t.traceId } : {}),
  });
  return { kind: 'queued', ahead };
}
