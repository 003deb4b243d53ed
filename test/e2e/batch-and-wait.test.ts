/**
 * Two ways to submit with fewer requests: `POST /v1/tasks/batch` (many submissions, one request,
 * one outcome per task in order) and `POST /v1/tasks?wait_ms=` (one request that answers with the
 * result itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { http, startStack, type Stack } from '../support/stack.ts';
import { startAgent } from '../support/agents.ts';
import { hold } from '../support/hold.ts';

let stack: Stack;
const agents: ReachAgent[] = [];
/** `bw-slow` handlers run until the test lets them finish. */
const slow = hold();

interface Item {
  http_status: number;
  task_id?: string;
  status?: string;
  agent_id?: string;
  error?: string;
  message?: string;
}

beforeAll(async () => {
  stack = await startStack();
  agents.push(
    await startAgent(stack, 'bw-a', ['bw-echo'], async (t) => ({ echo: t.payload }), {
      maxConcurrency: 50,
    }),
    await startAgent(
      stack,
      'bw-b',
      ['bw-echo', 'bw-fail'],
      async (t) => {
        if (t.capability === 'bw-fail')
          throw Object.assign(new Error('bad input'), { retryable: false });
        return { echo: t.payload };
      },
      { maxConcurrency: 50 },
    ),
    await startAgent(
      stack,
      'bw-slow',
      ['bw-slow'],
      async () => {
        await slow.wait;
        return 'late';
      },
      { maxConcurrency: 2 },
    ),
  );
});

afterAll(async () => {
  slow.release();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

async function waitFinal(taskId: string): Promise<{ status: string; result?: unknown }> {
  for (let i = 0; i < 100; i++) {
    const res = await http<{ status: string; result?: unknown }>(
      `${stack.routerUrl}/v1/tasks/${taskId}`,
    );
    if (res.body.status === 'completed' || res.body.status === 'dead') return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not finish`);
}

describe('POST /v1/tasks/batch', () => {
  it('submits every task and answers one outcome per task, in order, each as POST /v1/tasks would', async () => {
    const res = await http<{ results: Item[] }>(`${stack.routerUrl}/v1/tasks/batch`, {
      body: {
        tasks: [
          { task_id: 'batch-1', capability: 'bw-echo', payload: 1 },
          { task_id: 'batch-2', capability: 'bw-echo', payload: 2 },
          { task_id: 'batch-3', capability: 'nobody-serves-this', payload: 3 },
          { capability: 'bw-echo', payload: 4 },
          { task_id: 'batch-1', capability: 'bw-echo', payload: 'again' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const [one, two, none, generated, repeated] = res.body.results;
    expect(res.body.results).toHaveLength(5);
    expect(one).toMatchObject({ task_id: 'batch-1', status: 'sent' });
    expect([200, 202]).toContain(one?.http_status);
    expect(two).toMatchObject({ http_status: 202, task_id: 'batch-2', status: 'sent' });
    expect(none).toMatchObject({ http_status: 503, task_id: 'batch-3', error: 'NO_AGENT' });
    expect(generated?.http_status).toBe(202);
    expect(generated?.task_id).toMatch(/^[0-9a-f-]{36}$/);
    // The same task_id twice in one batch is one task: one of the two created it.
    expect([one?.http_status, repeated?.http_status].sort()).toEqual([200, 202]);
    expect(repeated?.agent_id).toBe(one?.agent_id);
    for (const id of ['batch-1', 'batch-2', generated?.task_id as string])
      expect((await waitFinal(id)).status).toBe('completed');
    expect((await waitFinal('batch-1')).result).toEqual({ echo: 1 });
  });

  it('refuses a batch that breaks the schema as a whole, with the item named', async () => {
    const empty = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks/batch`, {
      body: { tasks: [] },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('INVALID_BODY');
    const bad = await http<{ error: string; message: string }>(
      `${stack.routerUrl}/v1/tasks/batch`,
      {
        body: {
          tasks: [
            { capability: 'bw-echo', payload: 1 },
            { capability: 'bw-echo', payload: 1, colour: 'red' },
          ],
        },
      },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_BODY');
    expect(bad.body.message).toContain('/tasks/1');
  });
});

describe('ReachClient.submitBatch()', () => {
  it('submits many tasks in one request, and their results arrive on the client topic', async () => {
    const client = new ReachClient({
      routerUrl: stack.routerUrl,
      pollWaitMs: 1000,
      logger: pino({ level: 'silent' }),
    });
    try {
      const items = await client.submitBatch(
        Array.from({ length: 25 }, (_, i) => ({ capability: 'bw-echo', payload: i })),
      );
      expect(items.map((i) => i.http_status)).toEqual(items.map(() => 202));
      const results = await Promise.all(
        items.map((i) => client.result(i.task_id as string, { timeoutMs: 10_000 })),
      );
      expect(results.map((r) => r.result)).toEqual(
        Array.from({ length: 25 }, (_, i) => ({ echo: i })),
      );
      await expect(
        client.submitBatch(
          Array.from({ length: 1001 }, () => ({ capability: 'bw-echo', payload: 0 })),
        ),
      ).rejects.toThrow(RangeError);
    } finally {
      await client.close();
    }
  });
});

describe('POST /v1/tasks?wait_ms=', () => {
  it('answers 200 with the result once the task completed', async () => {
    const res = await http<{ task_id: string; status: string; result: unknown; agent_id: string }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=5000`,
      {
        body: { capability: 'bw-echo', payload: { hello: 'world' } },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', result: { echo: { hello: 'world' } } });
    expect(['bw-a', 'bw-b']).toContain(res.body.agent_id);
    const view = await http<{ status: string; result: unknown }>(
      `${stack.routerUrl}/v1/tasks/${res.body.task_id}`,
    );
    expect(view.body).toMatchObject({ status: 'completed', result: { echo: { hello: 'world' } } });
  });

  it('answers with the error of a task that died', async () => {
    const res = await http<{ status: string; error: string }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=5000`,
      {
        body: { capability: 'bw-fail', payload: 1 },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('dead');
    expect(res.body.error).toBeTruthy();
  });

  it('answers 202 with the task still running when the wait runs out, and the result stays readable', async () => {
    const res = await http<{ task_id: string; status: string; result?: unknown }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=200`,
      {
        body: { task_id: 'wait-slow-1', capability: 'bw-slow', payload: 1 },
      },
    );
    // The handler runs until the test lets it go, after the wait ran out.
    expect(res.status).toBe(202);
    expect(res.body.result).toBeUndefined();
    expect(['sent', 'received']).toContain(res.body.status);
    slow.release();
    expect((await waitFinal('wait-slow-1')).result).toBe('late');
  });

  it('serves many waiting requests at once, each with its own result', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        http<{ status: string; result: { echo: number } }>(
          `${stack.routerUrl}/v1/tasks?wait_ms=10000`,
          { body: { capability: 'bw-echo', payload: i } },
        ),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(replies.map((r) => r.body.result.echo)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('refuses wait_ms with a callback_topic, and a wait over the limit', async () => {
    const both = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks?wait_ms=1000`, {
      body: { capability: 'bw-echo', payload: 1, callback_topic: 'mine' },
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('INVALID_QUERY');
    const long = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks?wait_ms=600000`, {
      body: { capability: 'bw-echo', payload: 1 },
    });
    expect(long.status).toBe(400);
    expect(long.body.error).toBe('INVALID_QUERY');
  });
});
