import type { RedisClient } from '@agent-reach/service-kit/redis';
import { splitScopedId, type ReachKeys } from '@agent-reach/protocol';
import type { TaskSpec } from '../task/task-spec.ts';
import type { Cadence } from './ticks.ts';
import { scheduleAdvanceScript } from '../commands/schedule-advance.ts';
import { scheduleStateScript } from '../commands/schedule-state.ts';

/** A schedule as stored (`keys.schedule(id)`, every key under the `{sched}` hash tag). */
export interface ScheduleRecord {
  /** Scoped id (`<tenant>/<schedule_id>`, bare for the default tenant). */
  id: string;
  cadence: Cadence;
  /** The submit body as the caller gave it (JSON text), for display. */
  body: string;
  /** The task every tick fires, without its task_id (`<schedule id>:<tick ms>`). */
  spec: Omit<TaskSpec, 'taskId'>;
  /** The fired task's timeout, counted from its tick (0 for none). */
  timeoutMs: number;
  paused: boolean;
  createdAt: number;
  /** 0 while paused. */
  nextRunAt: number;
  /** 0 before the first tick fired. */
  lastRunAt: number;
  lastTaskId: string;
  /** The key that created it. */
  createdBy: string;
}

/** The tenant a schedule belongs to (its fired tasks are that tenant's). */
export function scheduleTenant(id: string): string {
  return splitScopedId(id).tenant;
}

/**
 * The task_id a schedule's tick fires: `<schedule id>:<tick ms>` (scoped like the schedule), so
 * a tick fired twice — by two leaders across a failover — is one task (the submit's idempotency).
 */
export function firedTaskId(scheduleId: string, tickMs: number): string {
  return `${scheduleId}:${tickMs}`;
}

function toHash(r: ScheduleRecord): Record<string, string> {
  return {
    id: r.id,
    cadence: JSON.stringify(r.cadence),
    body: r.body,
    spec: JSON.stringify(r.spec),
    timeout_ms: String(r.timeoutMs),
    paused: r.paused ? '1' : '0',
    created_at: String(r.createdAt),
    next_run_at: String(r.nextRunAt),
    last_run_at: String(r.lastRunAt),
    last_task_id: r.lastTaskId,
    created_by: r.createdBy,
  };
}

function fromHash(h: Record<string, string>): ScheduleRecord | undefined {
  if (!h.id || !h.cadence || !h.spec) return undefined;
  try {
    return {
      id: h.id,
      cadence: JSON.parse(h.cadence) as Cadence,
      body: h.body ?? '{}',
      spec: JSON.parse(h.spec) as Omit<TaskSpec, 'taskId'>,
      timeoutMs: Number(h.timeout_ms ?? 0),
      paused: h.paused === '1',
      createdAt: Number(h.created_at ?? 0),
      nextRunAt: Number(h.next_run_at ?? 0),
      lastRunAt: Number(h.last_run_at ?? 0),
      lastTaskId: h.last_task_id ?? '',
      createdBy: h.created_by ?? '',
    };
  } catch {
    return undefined;
  }
}

/** What a {@link ScheduleStore} reads with. */
export interface ScheduleStoreOptions {
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * Schedules in Redis: one hash each, the set of their ids and the index of next ticks (a sorted
 * set, paused schedules left out), all under the `{sched}` hash tag so that the scripts and
 * transactions here touch one slot (Redis Cluster).
 */
export class ScheduleStore {
  constructor(private readonly o: ScheduleStoreOptions) {}

  /** Stores a new schedule and indexes its next tick. */
  async create(r: ScheduleRecord): Promise<void> {
    const { keys } = this.o;
    const tx = this.o.redis
      .multi()
      .hset(keys.schedule(r.id), toHash(r))
      .sadd(keys.schedules(), r.id);
    if (!r.paused) tx.zadd(keys.scheduleNext(), r.nextRunAt, r.id);
    await tx.exec();
  }

  /** One schedule by its scoped id. */
  async get(id: string): Promise<ScheduleRecord | undefined> {
    return fromHash(await this.o.redis.hgetall(this.o.keys.schedule(id)));
  }

  /** Every schedule, or those of `tenant` only, oldest first. */
  async list(tenant?: string): Promise<ScheduleRecord[]> {
    const ids = (await this.o.redis.smembers(this.o.keys.schedules())).filter(
      (id) => tenant === undefined || scheduleTenant(id) === tenant,
    );
    if (ids.length === 0) return [];
    // One slot ({sched}): a plain pipeline is fine on a cluster too.
    const pipeline = this.o.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.o.keys.schedule(id));
    const out: ScheduleRecord[] = [];
    for (const [err, h] of (await pipeline.exec()) ?? []) {
      const r = err ? undefined : fromHash(h as Record<string, string>);
      if (r) out.push(r);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /** Pauses (`next` unused) or resumes at `next`; false when there is no such schedule. */
  async setPaused(id: string, paused: boolean, next: number): Promise<boolean> {
    const { keys } = this.o;
    return scheduleStateScript.run(this.o.redis, {
      keys: { schedule: keys.schedule(id), nextTicks: keys.scheduleNext() },
      args: { id, paused: paused ? 1 : 0, next },
    });
  }

  /** Deletes a schedule; false when there was none. Tasks it fired are left as they are. */
  async delete(id: string): Promise<boolean> {
    const { keys } = this.o;
    const replies = await this.o.redis
      .multi()
      .del(keys.schedule(id))
      .srem(keys.schedules(), id)
      .zrem(keys.scheduleNext(), id)
      .exec();
    return Number(replies?.[0]?.[1] ?? 0) > 0;
  }

  /** Schedules whose next tick is at or before `now`: `[id, tick]` pairs, at most `limit`. */
  async due(now: number, limit: number): Promise<[string, number][]> {
    const flat = await this.o.redis.zrangebyscore(
      this.o.keys.scheduleNext(),
      '-inf',
      now,
      'WITHSCORES',
      'LIMIT',
      0,
      limit,
    );
    const out: [string, number][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] as string, Number(flat[i + 1])]);
    return out;
  }

  /**
   * Moves the schedule from the tick `read` to `next`, recording the tick fired and its task —
   * only if it still waits for `read` (not paused, resumed, deleted or advanced meanwhile).
   */
  async advance(id: string, read: number, next: number, fired: number, taskId: string) {
    const { keys } = this.o;
    return scheduleAdvanceScript.run(this.o.redis, {
      keys: { schedule: keys.schedule(id), nextTicks: keys.scheduleNext() },
      args: { id, read, next, fired, taskId },
    });
  }
}
