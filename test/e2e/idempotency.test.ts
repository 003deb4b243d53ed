/**
 * A task_id is delivered once: a repeated or racing submission with the same task_id gets the
 * existing task (200, same body shape) and nothing new reaches any agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';

let stack: Stack;
let redis: TestRedis;

beforeAll(async () => {
  stack = await startStack();
  redis = connectRedis(stack);
  for (const id of ['idem-a', 'idem-b', 'idem-c']) {
    const reg = await http(`${stack.registryUrl}/v1/agents/register`, {
      body: { agent_id: id, capabilities: ['idem'], max_concurrency: 100 },
    });
    expect(reg.status).toBe(200);
  }
});

afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

/** Task entries in the agents' inboxes (liveness probes from registry-sync are not counted). */
async function inboxTotal(): Promise<number> {
  const keys = stack.keys;
  const entries = await Promise.all(
    ['idem-a', 'idem-b', 'idem-c'].map((id) => redis.xrange(keys.inbox(id), '-', '+')),
  );
  return entries.flat().filter(([, fields]) => fields[fields.indexOf('capability') + 1] === 'idem')
    .length;
}

describe('idempotent submission', () => {
  it('answers a repeated task_id with the existing task and delivers nothing new', async () => {
    const before = await inboxTotal();
    const first = await http<{ task_id: string; agent_id: string; message_id: string }>(
      `${stack.routerUrl}/v1/tasks`,
      {
        body: { task_id: 'same-1', capability: 'idem', payload: { n: 1 } },
      },
    );
    expect(first.status).toBe(202);
    const second = await http<{
      task_id: string;
      agent_id: string;
      message_id: string;
      status: string;
    }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'same-1', capability: 'idem', payload: { n: 2 } },
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      task_id: 'same-1',
      agent_id: first.body.agent_id,
      message_id: first.body.message_id,
      status: 'sent',
    });
    expect(await inboxTotal()).toBe(before + 1);
  });

  it('delivers once when many submissions with one task_id race', async () => {
    const before = await inboxTotal();
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        http(`${stack.routerUrl}/v1/tasks`, {
          body: { task_id: 'race-1', capability: 'idem', payload: 1 },
        }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(await inboxTotal()).toBe(before + 1);
  });

  it('gives different task_ids their own deliveries, spread over the agents', async () => {
    const before = await inboxTotal();
    const replies = [];
    for (let i = 0; i < 30; i++)
      replies.push(
        await http<{ agent_id: string }>(`${stack.routerUrl}/v1/tasks`, {
          body: { capability: 'idem', payload: i },
        }),
      );
    expect(replies.every((r) => r.status === 202)).toBe(true);
    expect(new Set(replies.map((r) => r.body.agent_id)).size).toBe(3);
    expect(await inboxTotal()).toBe(before + 30);
  });
});
