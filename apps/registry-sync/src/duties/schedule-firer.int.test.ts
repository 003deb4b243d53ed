/**
 * Schedules on a real Redis: a due tick fires one `delayed` task `<schedule_id>:<tick ms>` whose
 * due entry sends it; ticks missed while no leader ran fire once, the latest; a tick fired again
 * by the next leader (the first stopped before moving the schedule on) adds no second task; a
 * paused schedule fires nothing until resumed; a cron schedule fires on its cron's ticks.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import {
  defineDispatchCommands,
  firedTaskId,
  nextTick,
  NO_CONSTRAINTS,
  ScheduleStore,
  type Cadence,
  type ScheduleRecord,
} from '@agent-reach/dispatch';
import { createEventSink } from '@agent-reach/events';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { ScheduleFirer } from './schedule-firer.ts';

const silent = pino({ level: 'silent' });
let redis: Redis;
let keys: ReachKeys;
let store: ScheduleStore;
const events = createEventSink({ logger: silent });

beforeAll(async () => {
  redis = new Redis(testServices().redisUrl);
  defineDispatchCommands(redis, ['hold', 'schedule-state', 'schedule-advance']);
});

afterAll(async () => {
  await events.close();
  await redis?.quit();
});

beforeEach(() => {
  keys = reachKeys(randomPrefix());
  store = new ScheduleStore({ redis, keys });
});

const firer = () => new ScheduleFirer({ redis, keys, store, events, logger: silent });

/** The fired task's spec: only the fields a plain submission sets. */
const BASE_SPEC: Partial<ScheduleRecord['spec']> = {
  capability: 'tick',
  payload: '{"n":1}',
  callbackTopic: '',
  traceId: '',
  ...NO_CONSTRAINTS,
};
const SPEC = BASE_SPEC as ScheduleRecord['spec'];

function schedule(id: string, cadence: Cadence, next: number): ScheduleRecord {
  return {
    id,
    cadence,
    body: JSON.stringify({ capability: 'tick', payload: { n: 1 } }),
    spec: SPEC,
    timeoutMs: 0,
    paused: false,
    createdAt: next - 1000,
    nextRunAt: next,
    lastRunAt: 0,
    lastTaskId: '',
    createdBy: 'open',
  };
}

describe('schedule firer', () => {
  it('fires the latest missed tick once as a delayed task, skips older ones, and moves on', async () => {
    const now = Date.now();
    const anchor = now - 6500;
    const cadence: Cadence = { everyMs: 1000, anchorMs: anchor };
    // Ticks at anchor + 1000 … anchor + 6000 were missed (no leader ran).
    await store.create(schedule('s1', cadence, anchor + 1000));
    expect(await firer().fire(now)).toBe(1);
    const latest = anchor + 6000;
    const taskId = firedTaskId('s1', latest);
    const task = await redis.hgetall(keys.task(taskId));
    expect(task.status).toBe('delayed');
    expect(Number(task.due_at)).toBe(latest);
    expect(await redis.zscore(keys.dueOf(taskId), watchdogMember(taskId))).toBe(String(latest));
    // Only the latest tick became a task.
    expect(await redis.exists(keys.task(firedTaskId('s1', anchor + 5000)))).toBe(0);
    const after = await store.get('s1');
    expect(after?.nextRunAt).toBe(nextTick(cadence, now));
    expect(after?.lastTaskId).toBe(taskId);
    // Not due again until its next tick.
    expect(await firer().fire(now)).toBe(0);
  });

  it('a tick fired again by the next leader is one task', async () => {
    const now = Date.now();
    const due = now - 10;
    await store.create(schedule('s2', { everyMs: 1000, anchorMs: due - 1000 }, due));
    expect(await firer().fire(now)).toBe(1);
    const taskId = firedTaskId('s2', due);
    const created = await redis.hget(keys.task(taskId), 'created_at');
    // The first leader stopped before moving the schedule on: the next one finds the tick due.
    await redis.zadd(keys.scheduleNext(), due, 's2');
    expect(await firer().fire(now + 50)).toBe(0);
    expect(await redis.hget(keys.task(taskId), 'created_at')).toBe(created);
    expect(await redis.lrange(keys.timeline(taskId), 0, -1)).toHaveLength(1);
    expect((await store.get('s2'))?.nextRunAt).toBe(due + 1000);
  });

  it('a tick when no agent serves the capability is skipped: no task, the schedule moves on', async () => {
    const now = Date.now();
    const cadence: Cadence = { everyMs: 1000, anchorMs: now - 1500 };
    await store.create(schedule('s5', cadence, now - 500));
    const unserved = new ScheduleFirer({
      redis,
      keys,
      store,
      events,
      logger: silent,
      served: (capabilities) => capabilities.includes('someone-else'),
    });
    expect(await unserved.fire(now)).toBe(0);
    expect(await redis.exists(keys.task(firedTaskId('s5', now - 500)))).toBe(0);
    const after = await store.get('s5');
    expect(after?.nextRunAt).toBe(nextTick(cadence, now));
    expect([after?.lastRunAt, after?.lastTaskId]).toEqual([0, '']);
  });

  it('a paused schedule fires nothing until resumed', async () => {
    const now = Date.now();
    const cadence: Cadence = { everyMs: 1000, anchorMs: now - 1500 };
    await store.create(schedule('s3', cadence, now - 500));
    expect(await store.setPaused('s3', true, 0)).toBe(true);
    expect(await firer().fire(now)).toBe(0);
    expect((await store.get('s3'))?.paused).toBe(true);
    expect(await store.setPaused('s3', false, now - 1)).toBe(true);
    expect(await firer().fire(now)).toBe(1);
    expect(await store.setPaused('missing', true, 0)).toBe(false);
    expect(await store.delete('s3')).toBe(true);
    expect(await store.delete('s3')).toBe(false);
    expect(await store.list()).toEqual([]);
  });

  it('a cron schedule fires on its ticks, read in its time zone', async () => {
    const cadence: Cadence = { cron: '*/2 * * * * *', timezone: 'Europe/Paris' };
    const now = Date.now();
    const first = nextTick(cadence, now - 3000);
    expect(first % 2000).toBe(0);
    await store.create(schedule('tenant-a/s4', cadence, first));
    expect(await firer().fire(now)).toBe(1);
    const fired = await store.get('tenant-a/s4');
    expect(fired?.lastTaskId).toMatch(/^tenant-a\/s4:\d+$/);
    expect(Number(fired?.lastTaskId.split(':')[1]) % 2000).toBe(0);
    expect(fired?.nextRunAt).toBeGreaterThan(now);
    expect((await store.list('tenant-a')).map((s) => s.id)).toEqual(['tenant-a/s4']);
    expect(await store.list('other')).toEqual([]);
  });
});
