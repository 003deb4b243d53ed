/**
 * GET /v1/tasks/:task_id/timeline through a whole task's life: from Redis while the task is
 * recent, from InfluxDB once its Redis state is gone (the keys are deleted here to play
 * REACH_TASK_RETENTION_S running out), 404 when neither has it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { waitFor } from '@agent-reach/testkit';
import { startScriptedWorker, type ScriptedWorker } from '../support/scripted-worker.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

interface Stage {
  stage: string;
  at: number;
  gap_ms: number;
  agent_id: string | null;
  attempt: number | null;
  duration_ms?: number;
}
interface Timeline {
  task_id: string;
  source: 'redis' | 'influxdb';
  stages: Stage[];
}

const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const capability = `tl-echo-${suffix}`;
const agentId = `tl-agent-${suffix}`;
let stack: Stack;
let redis: Redis;
let worker: ScriptedWorker;

beforeAll(async () => {
  // No archive: the keys deleted below play an expiry with nothing archived (an archived task's
  // timeline is test/e2e/task-history.test.ts's).
  stack = await startStack({ influx: 'v1', env: { REACH_TASK_ARCHIVE: 'off' } });
  redis = new Redis(stack.redisUrl);
  worker = await startScriptedWorker({
    redisUrl: stack.redisUrl,
    registryUrl: stack.registryUrl,
    agentId,
    capabilities: [capability],
    handle: (task) => ({ result: task.payload, duration_ms: 7 }),
  });
});

afterAll(async () => {
  await worker?.stop();
  await redis?.quit();
  await stack?.stop();
});

const timeline = (id: string) => http<Timeline>(`${stack.routerUrl}/v1/tasks/${id}/timeline`);

function expectGaps(stages: Stage[]): void {
  stages.forEach((s, i) => expect(s.gap_ms).toBe(i === 0 ? 0 : s.at - (stages[i - 1]?.at ?? 0)));
}

describe('a task timeline', () => {
  it('comes from Redis while the task is recent, and from InfluxDB once its state expired', async () => {
    const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability, payload: { n: 1 } },
    });
    expect(sub.status).toBe(202);
    const taskId = sub.body.task_id;
    const recent = await waitFor(
      async () => {
        const r = await timeline(taskId);
        return r.body.stages?.some((s) => s.stage === 'completed') ? r : undefined;
      },
      { message: 'the task did not complete' },
    );
    expect(recent.status).toBe(200);
    expect(recent.body.source).toBe('redis');
    expect(recent.body.stages.map((s) => s.stage)).toEqual([
      'accepted',
      'sent',
      'received',
      'completed',
    ]);
    expect(recent.body.stages[0]).toMatchObject({
      stage: 'accepted',
      gap_ms: 0,
      agent_id: null,
      attempt: null,
    });
    for (const s of recent.body.stages.slice(1))
      expect(s).toMatchObject({ agent_id: agentId, attempt: 1 });
    expect(recent.body.stages.at(-1)?.duration_ms).toBe(7);
    expectGaps(recent.body.stages);

    // The Redis state "expires"; the events reach InfluxDB within a flush interval (polled below).
    const keys = stack.keys;
    // (An ordinary task has no timeline list: its stages are fields of the task hash.)
    expect(await redis.del(keys.task(taskId), keys.timeline(taskId))).toBe(1);
    expect((await http(`${stack.routerUrl}/v1/tasks/${taskId}`)).status).toBe(404);

    const old = await waitFor(
      async () => {
        const r = await timeline(taskId);
        return r.status === 200 && r.body.stages.length >= 3 ? r : undefined;
      },
      { message: 'the task did not show up from InfluxDB' },
    );
    expect(old.body.source).toBe('influxdb');
    expect(old.body.stages.map((s) => s.stage)).toEqual(['sent', 'received', 'completed']);
    for (const s of old.body.stages) expect(s).toMatchObject({ agent_id: agentId, attempt: 1 });
    expect(old.body.stages[2]?.duration_ms).toBe(7);
    expectGaps(old.body.stages);
    // The same moments as Redis recorded them (both are the Redis server time of each stage).
    expect(old.body.stages.map((s) => s.at)).toEqual(recent.body.stages.slice(1).map((s) => s.at));
  });

  it('is 404 TASK_NOT_FOUND when neither Redis nor InfluxDB knows the task', async () => {
    const res = await timeline(`never-${suffix}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'TASK_NOT_FOUND' });
  });
});
