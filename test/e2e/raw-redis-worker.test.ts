/**
 * A worker played with raw Redis commands, exactly as docs/PROTOCOL.md tells a worker in any
 * language to behave: register over HTTP, XREADGROUP from its stream, XADD receipt and
 * completion to the acks stream, XACK. Then the task's timeline, its callback and its three
 * events in InfluxDB are checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryInfluxQL } from '@agent-reach/events';
import { SYNC_GROUP } from '@agent-reach/protocol';
import { testServices, waitFor } from '@agent-reach/testkit';
import { http, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { morePasses } from '../support/passes.ts';

let stack: Stack;
let redis: TestRedis;

beforeAll(async () => {
  stack = await startStack({ influx: 'v1' });
  redis = connectRedis(stack);
});

afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

type Entry = [string, string[]];
type ReadReply = [string, Entry[]][] | null;

describe('a worker that speaks only Redis', () => {
  it('completes a task: sent, received and completed in order, one callback, three points in InfluxDB', async () => {
    // 1. Register (HTTP): the reply names the stream, group and acks stream to use.
    const reg = await http<{
      epoch: number;
      instance_id: string;
      stream: string;
      group: string;
      acks_stream: string;
    }>(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'raw-1',
        instance_id: 'raw-1-a',
        capabilities: ['echo'],
        max_concurrency: 2,
      },
    });
    expect(reg.status).toBe(200);
    const { stream, group, acks_stream: acks, epoch } = reg.body;

    // 2. A caller submits.
    const sub = await http<{ task_id: string; status: string; agent_id: string }>(
      `${stack.routerUrl}/v1/tasks`,
      {
        body: {
          capability: 'echo',
          payload: { text: 'hello' },
          callback_topic: 'raw-caller',
          trace_id: 'trace-raw-1',
        },
      },
    );
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ status: 'sent', agent_id: 'raw-1' });
    const taskId = sub.body.task_id;

    // 3. XREADGROUP GROUP workers raw-1-a COUNT 1 BLOCK 5000 STREAMS <stream> >
    const read = (await redis.call(
      'XREADGROUP',
      'GROUP',
      group,
      'raw-1-a',
      'COUNT',
      '1',
      'BLOCK',
      '5000',
      'STREAMS',
      stream,
      '>',
    )) as ReadReply;
    const [entryId, flat] = read?.[0]?.[1]?.[0] ?? ['', []];
    const fields = Object.fromEntries(
      flat.flatMap((_, i) => (i % 2 === 0 ? [[flat[i], flat[i + 1]]] : [])),
    );
    expect(fields).toMatchObject({
      task_id: taskId,
      capability: 'echo',
      payload: '{"text":"hello"}',
      attempt: '1',
      trace_id: 'trace-raw-1',
      callback_topic: 'raw-caller',
      deadline_ms: '0',
    });

    // 4. Receipt at once, then the completion, then XACK.
    const common = [
      'task_id',
      taskId,
      'agent_id',
      'raw-1',
      'instance_id',
      'raw-1-a',
      'epoch',
      String(epoch),
      'attempt',
      fields.attempt as string,
    ];
    await redis.call('XADD', acks, '*', ...common, 'stage', 'received');
    await redis.call(
      'XADD',
      acks,
      '*',
      ...common,
      'stage',
      'completed',
      'result',
      fields.payload as string,
      'duration_ms',
      '3',
    );
    expect(await redis.call('XACK', stream, group, entryId)).toBe(1);

    // The caller sees exactly one result on its callback topic.
    const cb = await http<{
      items: { task_id: string; status: string; result: unknown }[];
      cursor: string;
    }>(`${stack.routerUrl}/v1/callbacks/raw-caller?wait_ms=5000`);
    expect(cb.status).toBe(200);
    expect(cb.body.items).toHaveLength(1);
    expect(cb.body.items[0]).toMatchObject({
      task_id: taskId,
      status: 'completed',
      result: { text: 'hello' },
    });

    // The task's state and its timeline, stages in order.
    const task = await http<{
      status: string;
      result: unknown;
      attempts: number;
      timeline: { stage: string; at: number }[];
    }>(`${stack.routerUrl}/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({
      status: 'completed',
      result: { text: 'hello' },
      attempts: 1,
    });
    const stages = task.body.timeline.map((e) => e.stage);
    expect(stages).toEqual(['accepted', 'sent', 'received', 'completed']);
    const times = task.body.timeline.map((e) => e.at);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // Nothing more arrives on the topic after the cursor: registry-sync applied both acks (the
    // task is completed) and acknowledged them, and has swept since, so nothing is left that
    // could publish again.
    await waitFor(async () => Number((await redis.xpending(acks, SYNC_GROUP))[0]) === 0, {
      message: 'registry-sync did not acknowledge both acks',
    });
    await morePasses(stack, 2);
    const after = await http<{ items: unknown[] }>(
      `${stack.routerUrl}/v1/callbacks/raw-caller?after=${cb.body.cursor}`,
    );
    expect(after.body.items).toHaveLength(0);

    // The three stages are points in InfluxDB, found by the task_id field.
    const { influxUrl, influxBucket } = testServices();
    const rows = await waitFor(
      async () => {
        const r = await queryInfluxQL(
          influxUrl,
          influxBucket,
          `SELECT "stage", "agent_id", "capability", "attempt", "latency_ms", "trace_id" FROM "reach_task_events" WHERE "task_id" = '${taskId}'`,
        );
        return r.length >= 3 ? r : undefined;
      },
      { timeoutMs: 10_000, message: 'events did not reach InfluxDB' },
    );
    expect(rows.map((r) => r.stage).sort()).toEqual(['completed', 'received', 'sent']);
    for (const r of rows)
      expect(r).toMatchObject({
        agent_id: 'raw-1',
        capability: 'echo',
        attempt: 1,
        trace_id: 'trace-raw-1',
      });
  });

  it('refuses a completion from an instance that a newer one fenced off', async () => {
    const old = await http<{ epoch: number; stream: string; group: string; acks_stream: string }>(
      `${stack.registryUrl}/v1/agents/register`,
      {
        body: {
          agent_id: 'raw-2',
          instance_id: 'old',
          capabilities: ['fenced'],
          max_concurrency: 1,
        },
      },
    );
    const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'fenced', payload: 1 },
    });
    expect(sub.status).toBe(202);
    const taken = await http<{ epoch: number }>(`${stack.registryUrl}/v1/agents/register`, {
      body: { agent_id: 'raw-2', instance_id: 'new', capabilities: ['fenced'], max_concurrency: 1 },
    });
    expect(taken.body.epoch).toBe(old.body.epoch + 1);
    const common = [
      'task_id',
      sub.body.task_id,
      'agent_id',
      'raw-2',
      'instance_id',
      'old',
      'epoch',
      String(old.body.epoch),
      'attempt',
      '1',
    ];
    await redis.call(
      'XADD',
      old.body.acks_stream,
      '*',
      ...common,
      'stage',
      'completed',
      'result',
      '"late"',
    );
    await waitFor(
      async () => (await redis.hget(`${stack.prefix}:stats`, 'acks_refused:stale_epoch')) === '1',
      {
        message: 'the stale completion was not refused',
      },
    );
    // The stale result is not the task's: it is not completed (the sweeper may meanwhile have
    // taken the attempt back from the fenced epoch and be re-sending it).
    const task = await http<{ status: string; result?: unknown }>(
      `${stack.routerUrl}/v1/tasks/${sub.body.task_id}`,
    );
    expect(task.body.status).not.toBe('completed');
    expect(task.body.result).toBeUndefined();
  });
});
