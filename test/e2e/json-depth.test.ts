/**
 * JSON nested too deep (docs/errors.md JSON_TOO_DEEP): a payload, a batch item's payload or an
 * agent's meta past 64 levels is a 400 JSON_TOO_DEEP — never the 500 that JSON.stringify's stack
 * overflow gave at about 4,500 levels — and 64 levels still go through. A batch answers per item.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent } from '@agent-reach/worker-sdk';
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
});
