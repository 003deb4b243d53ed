import { randomUUID } from 'node:crypto';
import type { ScheduleBody, ScheduleView } from '@agent-reach/protocol';
import { cadenceProblem, nextTick, type Cadence, type ScheduleRecord } from '@agent-reach/dispatch';
import { httpError, mayUseCapability, type Principal } from '@agent-reach/service-kit';
import { specFromSubmit } from '../submit/task-spec.ts';
import type { TenantScope } from '../tasks/tenant-scope.ts';

/** Limits a new schedule's task is held to, as a submission would be. */
export interface ScheduleLimits {
  maxPayloadBytes: number;
  /** Timeout of a fired task when its body gives none, seconds (0 = none). */
  defaultTimeoutS: number;
}

function invalid(message: string): never {
  throw httpError('INVALID_SCHEDULE', message);
}

/** The cadence a schedule body asks for: exactly one of `cron` and `every_ms`. */
function cadenceOf(body: ScheduleBody, now: number): Cadence {
  if ((body.cron === undefined) === (body.every_ms === undefined)) {
    invalid('give exactly one of cron and every_ms');
  }
  if (body.every_ms !== undefined) {
    if (body.timezone !== undefined) invalid('timezone goes with cron, not with every_ms');
    return { everyMs: body.every_ms, anchorMs: now };
  }
  const cadence = { cron: body.cron as string, timezone: body.timezone ?? 'UTC' };
  const problem = cadenceProblem(cadence);
  if (problem) invalid(problem);
  return cadence;
}

/**
 * A new schedule from `POST /v1/schedules`, checked as its task's submission would be: the key
 * may submit to the capability (403), the payload is within the limit (413); the task_id is the
 * tick's (`<schedule_id>:<tick ms>`), so the body names none, nor a parent, a delay, or a pool.
 * Its ids are scoped to the key's tenant, whose tasks the ticks fire.
 */
export function newSchedule(
  principal: Principal,
  scope: TenantScope,
  body: ScheduleBody,
  limits: ScheduleLimits,
  now: number,
): ScheduleRecord {
  const task = body.task;
  for (const field of ['task_id', 'parent_task_id', 'delay_ms', 'run_at'] as const) {
    if (task[field] !== undefined) {
      invalid(`task.${field} is not for a schedule: each tick's task is <schedule_id>:<tick ms>`);
    }
  }
  if (task.mode === 'batch' || task.on_no_agent === 'queue') {
    invalid(
      'a scheduled task is sent to a live agent, never pooled: leave mode and on_no_agent out',
    );
  }
  if (!mayUseCapability(principal, task.capability)) {
    throw httpError('FORBIDDEN', `this key may not submit to capability ${task.capability}`);
  }
  const payload = JSON.stringify(task.payload ?? null);
  if (Buffer.byteLength(payload) > limits.maxPayloadBytes) {
    throw httpError(
      'PAYLOAD_TOO_LARGE',
      `payload is over the limit of ${limits.maxPayloadBytes} bytes once serialised`,
    );
  }
  const cadence = cadenceOf(body, now);
  const scoped = {
    ...task,
    ...(task.callback_topic !== undefined
      ? { callback_topic: scope.own(task.callback_topic) }
      : {}),
  };
  const { taskId: _none, ...spec } = specFromSubmit('', scoped, payload, undefined, scope.tenant);
  return {
    id: scope.own(randomUUID()),
    cadence,
    body: JSON.stringify(task),
    spec,
    timeoutMs: (task.timeout_s ?? limits.defaultTimeoutS) * 1000,
    paused: false,
    createdAt: now,
    nextRunAt: nextTick(cadence, now),
    lastRunAt: 0,
    lastTaskId: '',
    createdBy: principal.keyId,
  };
}

/** A schedule as the requester sees it (ids relative to its tenant). */
export function scheduleView(scope: TenantScope, r: ScheduleRecord): ScheduleView {
  return {
    schedule_id: scope.show(r.id),
    ...('cron' in r.cadence
      ? { cron: r.cadence.cron, timezone: r.cadence.timezone }
      : { every_ms: r.cadence.everyMs }),
    task: JSON.parse(r.body) as unknown,
    paused: r.paused,
    next_run_at: r.paused ? 0 : r.nextRunAt,
    last_run_at: r.lastRunAt,
    ...(r.lastTaskId ? { last_task_id: scope.show(r.lastTaskId) } : {}),
    created_at: r.createdAt,
  };
}
