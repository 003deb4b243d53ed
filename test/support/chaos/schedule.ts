/**
 * The chaos test's schedule: one every 1000 ms on the chaos capability, reporting to a topic of
 * its own, fired by registry-sync through the whole run (agent kills, the Redis kill). At the end
 * every tick that became a task must be final and completed at most once on the topic; ticks
 * missed while Redis was away may be skipped (the latest fires), never half-fired.
 */
import type { CallbackItem, TaskView } from '@agent-reach/protocol';
import { CHAOS_CAPABILITY } from './exec-log.ts';

/** The topic the schedule's tasks report to. */
export const SCHEDULE_TOPIC = 'chaos-schedule';
const FINAL = new Set(['completed', 'dead', 'cancelled']);

/** What the schedule did in the run. */
export interface ScheduleFigures {
  /** Ticks that became a task. */
  fired: number;
  completed: number;
  dead: number;
  /** Ticks that became a task that is not final: must be 0. */
  lost: number;
  /** Tick tasks completed more than once on the topic: must be 0. */
  duplicate_completions_delivered: number;
  /** Ticks between the first and the last fired that fired no task (missed while Redis was away). */
  skipped: number;
}

async function call(
  routers: readonly string[],
  path: string,
  init: RequestInit,
  until: number,
): Promise<Response | undefined> {
  for (let i = 0; Date.now() < until; i++) {
    try {
      const res = await fetch(`${routers[i % routers.length]}${path}`, {
        ...init,
        signal: AbortSignal.timeout(3000),
      });
      if (res.status < 500) return res;
      await res.arrayBuffer();
    } catch {
      // next router
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

/** Creates the schedule; returns its id. */
export async function startSchedule(routers: readonly string[]): Promise<string> {
  const res = await call(
    routers,
    '/v1/schedules',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        every_ms: 1000,
        task: {
          capability: CHAOS_CAPABILITY,
          payload: { scheduled: true },
          callback_topic: SCHEDULE_TOPIC,
        },
      }),
    },
    Date.now() + 30_000,
  );
  if (res?.status !== 201) throw new Error(`schedule not created: ${res?.status}`);
  return ((await res.json()) as { schedule_id: string }).schedule_id;
}

/** Deletes the schedule (it fires no more); returns the last tick it fired. */
export async function stopSchedule(routers: readonly string[], id: string): Promise<number> {
  const until = Date.now() + 30_000;
  const view = await call(routers, `/v1/schedules/${id}`, { method: 'GET' }, until);
  const last =
    view?.status === 200 ? ((await view.json()) as { last_run_at: number }).last_run_at : 0;
  await call(routers, `/v1/schedules/${id}`, { method: 'DELETE' }, until);
  // A tick fired between the read and the delete is looked for too.
  return last + 1000;
}

/** Every tick's task from the first fired to `lastTick`, and the topic's items, as figures. */
export async function scheduleFigures(
  id: string,
  lastTick: number,
  callbacks: readonly CallbackItem[],
  view: (taskId: string) => Promise<TaskView | undefined>,
): Promise<ScheduleFigures> {
  const ticks = callbacks
    .filter((c) => c.task_id.startsWith(`${id}:`))
    .map((c) => Number(c.task_id.slice(id.length + 1)));
  const first = Math.min(...ticks, lastTick);
  const f: ScheduleFigures = {
    fired: 0,
    completed: 0,
    dead: 0,
    lost: 0,
    duplicate_completions_delivered: 0,
    skipped: 0,
  };
  for (let tick = first; tick <= lastTick; tick += 1000) {
    const v = await view(`${id}:${tick}`);
    if (!v) {
      f.skipped++;
      continue;
    }
    f.fired++;
    if (v.status === 'completed') f.completed++;
    else if (v.status === 'dead') f.dead++;
    else if (!FINAL.has(v.status)) f.lost++;
    const completions = callbacks.filter(
      (c) => c.task_id === `${id}:${tick}` && c.status === 'completed',
    ).length;
    if (completions > 1) f.duplicate_completions_delivered++;
  }
  return f;
}
