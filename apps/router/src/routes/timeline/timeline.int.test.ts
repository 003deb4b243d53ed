/**
 * GET /v1/tasks/:task_id/timeline on a router in process, for a task whose Redis state is gone:
 * the stages come from InfluxDB. (test/e2e/timeline.test.ts plays the whole flow, Redis path
 * first, then expiry.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelineReply } from '@agent-reach/analytics';
import { uniqueName, writeEvents } from '@agent-reach/analytics/testing';
import { freePort, testServices } from '@agent-reach/testkit';
import type { RouterService } from '../../index.ts';
import { routerFactory } from '../../testing/routers.ts';

const routers = routerFactory();
const router = routers.start;
const taskId = uniqueName('tl');
const childId = uniqueName('tl-child');
const t0 = Date.now() - 120_000;

let withInflux: RouterService;

beforeAll(async () => {
  const { influxUrl, influxBucket } = testServices();
  const common = { capability: 'tl-echo', task_id: taskId };
  // Attempt 1 on agent-a fails, the retry goes to agent-b and completes; written out of order.
  await writeEvents(influxUrl, influxBucket, [
    {
      ...common,
      stage: 'completed',
      agent_id: 'agent-b',
      attempt: 2,
      at: t0 + 4000,
      latency_ms: 40,
      duration_ms: 35,
    },
    { ...common, stage: 'sent', agent_id: 'agent-a', attempt: 1, at: t0 },
    { ...common, stage: 'received', agent_id: 'agent-a', attempt: 1, at: t0 + 12, latency_ms: 12 },
    {
      ...common,
      stage: 'failed',
      agent_id: 'agent-a',
      attempt: 1,
      at: t0 + 50,
      latency_ms: 38,
      reason: 'boom',
    },
    { ...common, stage: 'sent', agent_id: 'agent-b', attempt: 2, at: t0 + 3000 },
    // A child the task submitted: its sent point names the parent.
    {
      capability: 'tl-echo',
      task_id: childId,
      stage: 'sent',
      agent_id: 'agent-a',
      attempt: 1,
      at: t0 + 3500,
      parent_task_id: taskId,
    },
    {
      ...common,
      stage: 'received',
      agent_id: 'agent-b',
      attempt: 2,
      at: t0 + 3960,
      latency_ms: 960,
    },
  ]);
  withInflux = await router({ url: influxUrl, bucket: influxBucket });
});

afterAll(async () => {
  await routers.closeAll();
});

describe('GET /v1/tasks/:task_id/timeline from InfluxDB', () => {
  it('lists each stage in order with its gap, agent and attempt', async () => {
    const res = await withInflux.app.inject({ url: `/v1/tasks/${taskId}/timeline` });
    expect(res.statusCode).toBe(200);
    expect(res.json<TimelineReply>()).toEqual({
      task_id: taskId,
      source: 'influxdb',
      stages: [
        { stage: 'sent', at: t0, gap_ms: 0, agent_id: 'agent-a', attempt: 1 },
        { stage: 'received', at: t0 + 12, gap_ms: 12, agent_id: 'agent-a', attempt: 1 },
        {
          stage: 'failed',
          at: t0 + 50,
          gap_ms: 38,
          agent_id: 'agent-a',
          attempt: 1,
          reason: 'boom',
        },
        { stage: 'sent', at: t0 + 3000, gap_ms: 2950, agent_id: 'agent-b', attempt: 2 },
        { stage: 'received', at: t0 + 3960, gap_ms: 960, agent_id: 'agent-b', attempt: 2 },
        {
          stage: 'completed',
          at: t0 + 4000,
          gap_ms: 40,
          agent_id: 'agent-b',
          attempt: 2,
          duration_ms: 35,
        },
      ],
    });
  });

  it('names a child’s parent, from its sent points', async () => {
    const res = await withInflux.app.inject({ url: `/v1/tasks/${childId}/timeline` });
    expect(res.json<TimelineReply>()).toMatchObject({
      task_id: childId,
      source: 'influxdb',
      parent_task_id: taskId,
      stages: [{ stage: 'sent', at: t0 + 3500 }],
    });
  });

  it('answers 404 TASK_NOT_FOUND when neither Redis nor InfluxDB has the task', async () => {
    const res = await withInflux.app.inject({ url: `/v1/tasks/${uniqueName('nope')}/timeline` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      error: 'TASK_NOT_FOUND',
      message: expect.stringContaining('InfluxDB'),
    });
  });

  it('answers 404 without INFLUX_URL, and 503 EVENTS_UNAVAILABLE when InfluxDB does not answer', async () => {
    const none = await router();
    expect((await none.app.inject({ url: `/v1/tasks/${taskId}/timeline` })).json()).toMatchObject({
      error: 'TASK_NOT_FOUND',
    });
    const down = await router({ url: `http://127.0.0.1:${await freePort()}`, bucket: 'reach' });
    const res = await down.app.inject({ url: `/v1/tasks/${taskId}/timeline` });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'EVENTS_UNAVAILABLE' });
  });

  it('refuses a malformed task id with 400 INVALID_PARAMS', async () => {
    const res = await withInflux.app.inject({ url: '/v1/tasks/a%7Bb%7D/timeline' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_PARAMS' });
  });
});
