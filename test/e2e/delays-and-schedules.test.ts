/**
 * Delayed tasks and schedules against real services: a task submitted with `delay_ms` or `run_at`
 * is answered 202 `delayed`, runs no earlier than it is due and within a bound (lateness p50/p99
 * printed), shows its `delayed` stage, keeps its task_id idempotent and can be cancelled while it
 * waits; a schedule every 1000 ms fires tasks `<schedule_id>:<tick ms>`, pause stops it, resume
 * starts it again, delete stops it for good (404 after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { morePasses, reached } from '../support/passes.ts';
import { FAST_LEASES, http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let client: ReachClient;
const agents: ReachAgent[] = [];
/** task_id → when its handler started (ms), and how many times it ran. */
const started = new Map<string, number>();
const runs = new Map<string, number>();

type TaskView = {
  status: string;
  timeline: { stage: string; at: number; until?: number; routing?: { reason?: string } }[];
};
type Schedule = {
  schedule_id: string;
  paused: boolean;
  next_run_at: number;
  last_run_at: number;
  last_task_id?: string;
  every_ms?: number;
};

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES } });
  client = new ReachClient({ routerUrl: stack.routerUrl });
  agents.push(
    await startAgent(stack, 'later-1', ['later'], async (t) => {
      started.set(t.taskId, Date.now());
      runs.set(t.taskId, (runs.get(t.taskId) ?? 0) + 1);
      return { ok: true };
    }),
  );
}, 2 * START_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

const view = async (id: string) =>
  (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${encodeURIComponent(id)}`)).body;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/**
 * The ticks of a schedule every `everyMs` on the grid through `anchor` that came after `afterMs`
 * and by `untilMs`, each with whether a task of that tick exists (`<schedule_id>:<tick>`).
 */
async function tasksOfTicks(
  scheduleId: string,
  anchor: number,
  everyMs: number,
  afterMs: number,
  untilMs: number,
): Promise<{ tick: number; status: number }[]> {
  const found: { tick: number; status: number }[] = [];
  const first = anchor + Math.floor((afterMs - anchor) / everyMs + 1) * everyMs;
  for (let tick = first; tick <= untilMs; tick += everyMs) {
    const res = await http(
      `${stack.routerUrl}/v1/tasks/${encodeURIComponent(`${scheduleId}:${tick}`)}`,
    );
    found.push({ tick, status: res.status });
  }
  return found;
}

/** The tasks a schedule fired that ran, by tick. */
function firedBy(scheduleId: string): number[] {
  return [...started.keys()]
    .filter((id) => id.startsWith(`${scheduleId}:`))
    .map((id) => Number(id.slice(scheduleId.length + 1)))
    .sort((a, b) => a - b);
}

describe('delayed tasks', () => {
  it('runs each no earlier than due and within a bound; 202 delayed, the delayed stage, lateness printed', async () => {
    const N = 40;
    const due = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      // Half with delay_ms, half with run_at, due 0.5–2 s ahead.
      const before = Date.now();
      const ahead = 500 + ((i * 37) % 1500);
      const body =
        i % 2 === 0
          ? { capability: 'later', payload: i, delay_ms: ahead }
          : { capability: 'later', payload: i, run_at: before + ahead };
      const res = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
        body,
      });
      expect(res.status).toBe(202);
      expect(res.body.status).toBe('delayed');
      due.set(res.body.task_id, before + ahead);
    }
    const lateness: number[] = [];
    for (const [taskId, at] of due) {
      const t = await waitFor(
        async () => {
          const v = await view(taskId);
          return v.status === 'completed' ? v : undefined;
        },
        { timeoutMs: 15_000, message: `delayed task ${taskId} did not complete` },
      );
      const delayed = t.timeline.find((e) => e.stage === 'delayed');
      expect(delayed?.until).toBeGreaterThanOrEqual(at);
      const sent = t.timeline.find((e) => e.stage === 'sent');
      expect(sent?.routing?.reason).toBe('delayed');
      // Never before it is due (the due time as Redis recorded it, which the send is checked against).
      expect(sent?.at ?? 0).toBeGreaterThanOrEqual(delayed?.until ?? Infinity);
      expect(started.get(taskId) ?? 0).toBeGreaterThanOrEqual(at - 50);
      lateness.push((sent?.at ?? 0) - (delayed?.until ?? 0));
      expect(runs.get(taskId)).toBe(1);
    }
    lateness.sort((a, b) => a - b);
    const p50 = percentile(lateness, 50);
    const p99 = percentile(lateness, 99);
    console.log(
      `delayed task lateness (sent − due), ${N} tasks: p50 ${p50} ms, p99 ${p99} ms, max ${lateness[lateness.length - 1]} ms`,
    );
    // Within a few sweep intervals.
    expect(p99).toBeLessThan(1000);
  });

  it('a repeated task_id answers the delayed task (200); a cancel while it waits means it never runs', async () => {
    const body = { task_id: 'later-once', capability: 'later', payload: 1, delay_ms: 1500 };
    const first = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks`, { body });
    expect(first.status).toBe(202);
    const again = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { ...body, delay_ms: 10 },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ task_id: 'later-once', status: 'delayed' });
    const cancel = await http(`${stack.routerUrl}/v1/tasks/later-once/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(cancel.status).toBe(202);
    // A task due after it, to know the due time of the cancelled one has passed and was swept.
    const marker = await client.submit({ capability: 'later', payload: 'm', delay_ms: 1700 });
    await waitFor(() => started.has(marker.task_id), { timeoutMs: 10_000 });
    expect(started.has('later-once')).toBe(false);
    const v = await view('later-once');
    expect(v.status).toBe('cancelled');
    expect(v.timeline.map((e) => e.stage)).toEqual(['accepted', 'delayed', 'cancelled']);
  });

  it('refuses delay_ms with run_at, and run_at more than 30 days ahead (INVALID_DELAY)', async () => {
    const both = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'later', payload: 1, delay_ms: 10, run_at: Date.now() + 10 },
    });
    expect([both.status, both.body.error]).toEqual([400, 'INVALID_DELAY']);
    const far = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'later', payload: 1, run_at: Date.now() + 31 * 24 * 3600 * 1000 },
    });
    expect([far.status, far.body.error]).toEqual([400, 'INVALID_DELAY']);
    const pooled = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'later', payload: 1, delay_ms: 100, on_no_agent: 'queue' },
    });
    expect([pooled.status, pooled.body.error]).toEqual([400, 'INVALID_DELAY']);
  });
});

describe('schedules', () => {
  it('every 1000 ms fires; pause stops it, resume starts it again, delete stops it', async () => {
    const created = await http<Schedule>(`${stack.routerUrl}/v1/schedules`, {
      body: { every_ms: 1000, task: { capability: 'later', payload: { from: 'schedule' } } },
    });
    expect(created.status).toBe(201);
    const id = created.body.schedule_id;
    expect(created.body).toMatchObject({ every_ms: 1000, paused: false, last_run_at: 0 });
    await waitFor(() => firedBy(id).length >= 3, {
      timeoutMs: 10_000,
      message: 'no 3 ticks fired',
    });
    const ticks = firedBy(id);
    // One task per tick, on the schedule's cadence.
    for (let i = 1; i < ticks.length; i++) expect((ticks[i] ?? 0) - (ticks[i - 1] ?? 0)).toBe(1000);
    const listed = await http<{ schedules: Schedule[] }>(`${stack.routerUrl}/v1/schedules`);
    expect(listed.body.schedules.map((s) => s.schedule_id)).toContain(id);

    const paused = await http<Schedule>(`${stack.routerUrl}/v1/schedules/${id}/pause`, {
      method: 'POST',
      body: {},
    });
    expect(paused.body).toMatchObject({ paused: true, next_run_at: 0 });
    // Two ticks come due while it is paused; full passes begun after them fire neither: no
    // task of theirs exists. (A tick fired just before the pause is on or before pausedAt.)
    const pausedAt = Date.now();
    await reached(pausedAt + 2000);
    await morePasses(stack, 2);
    const pausedTicks = await tasksOfTicks(id, ticks[0] ?? 0, 1000, pausedAt, Date.now());
    expect(pausedTicks.length).toBeGreaterThanOrEqual(2);
    expect(pausedTicks.filter((t) => t.status !== 404)).toEqual([]);
    expect(firedBy(id).filter((t) => t > pausedAt)).toEqual([]);

    const resumed = await http<Schedule>(`${stack.routerUrl}/v1/schedules/${id}/resume`, {
      method: 'POST',
      body: {},
    });
    expect(resumed.body.paused).toBe(false);
    expect(resumed.body.next_run_at).toBeGreaterThan(Date.now() - 100);
    await waitFor(() => firedBy(id).some((t) => t > pausedAt), {
      timeoutMs: 10_000,
      message: 'resumed schedule did not fire',
    });

    const one = await http<Schedule>(`${stack.routerUrl}/v1/schedules/${id}`);
    expect(one.body.last_task_id).toMatch(new RegExp(`^${id}:\\d+$`));
    const del = await http(`${stack.routerUrl}/v1/schedules/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    const deletedAt = Date.now();
    expect((await http(`${stack.routerUrl}/v1/schedules/${id}`)).status).toBe(404);
    // Two ticks of its cadence come due after the delete; full passes begun after them fire
    // neither (at most a tick fired in the same instant as the delete).
    await reached(deletedAt + 2000);
    await morePasses(stack, 2);
    const lastTick = Math.max(...firedBy(id));
    const deletedTicks = await tasksOfTicks(id, lastTick, 1000, deletedAt + 100, Date.now());
    expect(deletedTicks.length).toBeGreaterThanOrEqual(1);
    expect(deletedTicks.filter((t) => t.status !== 404)).toEqual([]);
    expect(firedBy(id).filter((t) => t > deletedAt + 100)).toEqual([]);
    for (const t of firedBy(id)) expect(runs.get(`${id}:${t}`)).toBe(1);
  });

  it('refuses a bad cadence (INVALID_SCHEDULE) and every_ms under 1000 (INVALID_BODY)', async () => {
    const task = { capability: 'later', payload: 1 };
    const both = await http<{ error: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: { every_ms: 1000, cron: '* * * * *', task },
    });
    expect([both.status, both.body.error]).toEqual([400, 'INVALID_SCHEDULE']);
    const cron = await http<{ error: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: { cron: 'every day', task },
    });
    expect([cron.status, cron.body.error]).toEqual([400, 'INVALID_SCHEDULE']);
    const tz = await http<{ error: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: { cron: '* * * * *', timezone: 'Mars/Olympus', task },
    });
    expect([tz.status, tz.body.error]).toEqual([400, 'INVALID_SCHEDULE']);
    const fast = await http<{ error: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: { every_ms: 999, task },
    });
    expect([fast.status, fast.body.error]).toEqual([400, 'INVALID_BODY']);
    const unknown = await http<{ error: string }>(`${stack.routerUrl}/v1/schedules/nope/pause`, {
      method: 'POST',
      body: {},
    });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'SCHEDULE_NOT_FOUND']);
  });
});
