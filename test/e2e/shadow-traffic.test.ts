/**
 * Shadow traffic (docs/PROTOCOL.md §7): with the capability's shadow rate at 50 %, the tasks
 * picked by their id are mirrored to an agent in observation mode, whose answer differs from the
 * serving agent's on one path for one task in four. The observation report counts the mirrored
 * tasks and agrees exactly where the answers do, by the capability's compared paths; every
 * caller, callback topic and task record sees the serving agent's result only, and the handler
 * knows a shadow copy by `ctx.shadow`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { shadowPicked, type ObservationReport } from '@agent-reach/protocol';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';
import { untilRouted } from '../support/endpoints.ts';

const TASKS = 400;
const CAPABILITY = 'answer';
const TOPIC = 'shadow-results';

let stack: Stack;
let redis: TestRedis;
const agents: ReachAgent[] = [];
/** Tasks the observing agent ran, and whether each came as a shadow copy. */
const observed: { taskId: string; shadow: boolean }[] = [];
const served: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { REACH_SNAPSHOT_MS: '500' } });
  redis = connectRedis(stack);
  agents.push(
    await startAgent(
      stack,
      'serving',
      [CAPABILITY],
      async (t) => {
        served.push(t.taskId);
        const { n } = t.payload as { n: number };
        await new Promise((r) => setTimeout(r, 5));
        return { answer: n * 2, meta: { model: 'v1' } };
      },
      { maxConcurrency: 16 },
    ),
    await startAgent(
      stack,
      'candidate',
      [CAPABILITY],
      async (t) => {
        observed.push({ taskId: t.taskId, shadow: t.shadow });
        const { n } = t.payload as { n: number };
        await new Promise((r) => setTimeout(r, 8));
        // A newer model: the same answer, but one task in four wrong; `meta` always differs.
        return { answer: n % 4 === 0 ? n * 2 + 1 : n * 2, meta: { model: 'v2' } };
      },
      { maxConcurrency: 64, observe: true },
    ),
  );
  await untilRouted(stack, CAPABILITY);
}, 2 * START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  redis?.disconnect();
  await stack?.stop();
});

describe('shadow traffic at a 50 % rate', () => {
  it('mirrors the picked tasks, reports agreement by the compared path, and reaches no caller', async () => {
    const put = await http<{ rate: number; source: string }>(
      `${stack.routerUrl}/v1/capabilities/${CAPABILITY}/shadow`,
      { method: 'PUT', body: { rate: 0.5, compare: { paths: ['answer'] } } },
    );
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ rate: 0.5, source: 'capability' });
    const bad = await http<{ error: string }>(
      `${stack.routerUrl}/v1/capabilities/${CAPABILITY}/shadow`,
      { method: 'PUT', body: { rate: 1.5 } },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_BODY');
    // Routers and registry-sync re-read the settings every 2 s.
    await new Promise((r) => setTimeout(r, 2500));

    const ids = Array.from({ length: TASKS }, (_, n) => `shadow-${n}`);
    let next = 0;
    const submitter = async () => {
      while (next < TASKS) {
        const n = next++;
        const res = await http(`${stack.routerUrl}/v1/tasks`, {
          body: { task_id: ids[n], capability: CAPABILITY, payload: { n }, callback_topic: TOPIC },
        });
        expect(res.status).toBe(202);
      }
    };
    await Promise.all([submitter(), submitter(), submitter(), submitter()]);
    type Item = { task_id: string; agent_id: string; status: string; result?: unknown };
    const topic = async () =>
      (await http<{ items: Item[] }>(`${stack.routerUrl}/v1/callbacks/${TOPIC}?after=0&limit=1000`))
        .body.items;
    await waitFor(async () => (await topic()).length >= TASKS, { timeoutMs: 30_000 });

    const picked = ids.filter((id) => shadowPicked(id, 0.5));
    const keys = stack.keys;
    const report = async () =>
      (await http<ObservationReport>(`${stack.registryUrl}/v1/agents/candidate/observation`)).body;
    await waitFor(
      async () => {
        const dropped = Number((await redis.hget(keys.stats(), 'shadow_dropped')) ?? 0);
        return (await report()).mirrored + dropped >= picked.length;
      },
      { timeoutMs: 30_000 },
    );
    const r = await report();
    const dropped = Number((await redis.hget(keys.stats(), 'shadow_dropped')) ?? 0);
    console.log(
      `shadow traffic: ${TASKS} tasks, ${picked.length} picked at 50 %, ${r.mirrored} mirrored, ${dropped} dropped; agreement ${((r.agreement_rate ?? 0) * 100).toFixed(1)} %; observer p50 ${r.observer.p50_ms} ms p95 ${r.observer.p95_ms} ms, serving p50 ${r.serving.p50_ms} ms p95 ${r.serving.p95_ms} ms`,
    );
    // Copies go only to free slots of the observer: none had to be dropped here.
    expect(dropped).toBe(0);
    expect(r.mirrored).toBe(picked.length);
    expect(r.compared).toBe(picked.length);
    expect(observed.every((o) => o.shadow)).toBe(true);
    expect(new Set(observed.map((o) => o.taskId))).toEqual(new Set(picked));
    // Agreement on `answer` only (`meta` differs everywhere and is not compared).
    const wrong = picked.filter((id) => Number(id.slice('shadow-'.length)) % 4 === 0);
    expect(r.agreement_rate).toBeCloseTo((picked.length - wrong.length) / picked.length, 9);
    expect(r.observer.success_rate).toBe(1);
    expect(r.serving.success_rate).toBe(1);
    expect(r.observer.p50_ms).not.toBeNull();
    expect(r.serving.p95_ms).not.toBeNull();
    expect(r.disagreements.length).toBe(Math.min(10, wrong.length));
    for (const d of r.disagreements) {
      expect(wrong).toContain(d.task_id);
      expect(d.differing).toEqual(['answer']);
      expect(d.serving_agent).toBe('serving');
    }

    // The callback topic and the task records carry the serving agent's results only, once each.
    const items = await topic();
    expect(items).toHaveLength(TASKS);
    expect(new Set(items.map((i) => i.task_id)).size).toBe(TASKS);
    for (const i of items) {
      expect(i).toMatchObject({ agent_id: 'serving', status: 'completed' });
      expect(i.result).toEqual({
        answer: Number(i.task_id.slice('shadow-'.length)) * 2,
        meta: { model: 'v1' },
      });
    }
    expect(served).toHaveLength(TASKS);
    const one = await http<{ result: unknown; agent_id: string }>(
      `${stack.routerUrl}/v1/tasks/${wrong[0]}`,
    );
    expect(one.body).toMatchObject({ agent_id: 'serving', result: { meta: { model: 'v1' } } });

    // Without its own settings the capability falls back to REACH_SHADOW_RATE (0 here).
    const dropSettings = await http<{ rate: number; source: string }>(
      `${stack.routerUrl}/v1/capabilities/${CAPABILITY}/shadow`,
      { method: 'DELETE' },
    );
    expect(dropSettings.body).toMatchObject({ rate: 0, source: 'default' });
  });
});
