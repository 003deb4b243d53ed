/**
 * JSON nested too deep (docs/errors.md JSON_TOO_DEEP): a payload, a batch item's payload or an
 * agent's meta past 64 levels is a 400 JSON_TOO_DEEP — never the 500 that JSON.stringify's stack
 * overflow gave at about 4,500 levels — and 64 levels still go through. A batch answers per item.
 * A raw worker's result nested that deep fails its task instead of every read of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let agent: ReachAgent;

beforeAll(async () => {
  stack = await startStack();
  agent = await startAgent(stack, 'deep-echo', ['deep-echo'], (task) =>
    Promise.resolve(task.payload),
  );
});

afterAll(async () => {
  await agent?.close();
  await stack?.stop();
});

/** `n` levels: `[[…[1]…]]`. */
const nested = (n: number): unknown => JSON.parse('['.repeat(n) + '1' + ']'.repeat(n));
/** The same as JSON text, for bodies JSON.stringify could not write. */
const nestedText = (n: number): string => '['.repeat(n) + '1' + ']'.repeat(n);

type Reply = { error?: string; message?: string; status?: string; result?: unknown };

describe('JSON depth', () => {
  it('refuses a payload of 65 and 4,500 levels with 400 JSON_TOO_DEEP and takes one of 64', async () => {
    for (const depth of [65, 4500]) {
      const res = await http<Reply>(`${stack.routerUrl}/v1/tasks`, {
        raw: `{"capability":"deep-echo","payload":${nestedText(depth)}}`,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('JSON_TOO_DEEP');
      expect(res.body.message).toMatch(/64/);
    }
    const ok = await http<Reply>(`${stack.routerUrl}/v1/tasks?wait_ms=5000`, {
      body: { capability: 'deep-echo', payload: nested(64) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'completed', result: nested(64) });
  });

  it('answers a batch per item: the deep item 400 JSON_TOO_DEEP, its neighbours accepted', async () => {
    const res = await http<{ results: { http_status: number; error?: string }[] }>(
      `${stack.routerUrl}/v1/tasks/batch`,
      {
        body: {
          tasks: [
            { capability: 'deep-echo', payload: 1 },
            { capability: 'deep-echo', payload: nested(65) },
            { capability: 'deep-echo', payload: nested(64) },
          ],
        },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => r.http_status)).toEqual([202, 400, 202]);
    expect(res.body.results[1]?.error).toBe('JSON_TOO_DEEP');
    // Deeper than any item could be: the whole batch is refused before it is parsed.
    const whole = await http<Reply>(`${stack.routerUrl}/v1/tasks/batch`, {
      raw: `{"tasks":[{"capability":"deep-echo","payload":${nestedText(4500)}}]}`,
    });
    expect(whole.status).toBe(400);
    expect(whole.body.error).toBe('JSON_TOO_DEEP');
  });

  it('refuses an agent whose meta nests 65 or 4,500 levels, and registers one of 64', async () => {
    for (const depth of [65, 4500]) {
      const res = await http<Reply>(`${stack.registryUrl}/v1/agents/register`, {
        raw: `{"agent_id":"deep-meta","capabilities":["x"],"max_concurrency":1,"meta":{"m":${nestedText(depth - 1)}}}`,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('JSON_TOO_DEEP');
    }
    const ok = await http<Reply>(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'deep-meta',
        capabilities: ['x'],
        max_concurrency: 1,
        meta: { m: nested(63) },
      },
    });
    expect(ok.body).toMatchObject({ agent_id: 'deep-meta' });
    expect(ok.status).toBe(200);
    for (const url of [stack.routerUrl, stack.registryUrl])
      expect((await http(`${url}/healthz`)).status).toBe(200);
  });

  it('fails a task whose raw worker completes it with a result 5,000 levels deep', async () => {
    type Reg = { epoch: number; stream: string; group: string; acks_stream: string };
    const reg = await http<Reg>(`${stack.registryUrl}/v1/agents/register`, {
      body: { agent_id: 'raw-deep', instance_id: 'i1', capabilities: ['deep'], max_concurrency: 1 },
    });
    const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'deep', payload: 1, callback_topic: 'deep-topic' },
    });
    const redis = new Redis(stack.redisUrl);
    try {
      const read = (await redis.call(
        'XREADGROUP', 'GROUP', reg.body.group, 'i1', 'COUNT', '1', 'BLOCK', '5000',
        'STREAMS', reg.body.stream, '>',
      )) as [string, [string, string[]][]][]; // prettier-ignore
      const entryId = read[0]?.[1][0]?.[0] ?? '';
      await redis.xadd(
        reg.body.acks_stream, '*', 'task_id', sub.body.task_id, 'stage', 'completed',
        'agent_id', 'raw-deep', 'instance_id', 'i1', 'epoch', String(reg.body.epoch),
        'attempt', '1', 'result', nestedText(5000),
      ); // prettier-ignore
      await redis.xack(reg.body.stream, reg.body.group, entryId);
    } finally {
      await redis.quit();
    }
    const view = async () =>
      http<{ status: string; error?: string }>(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}`);
    await waitFor(async () => (await view()).body.status === 'dead', {
      message: 'the task did not end',
    });
    const final = await view();
    expect(final.status).toBe(200);
    expect(JSON.stringify(final.body)).toMatch(/JSON_TOO_DEEP/);
  });
});
