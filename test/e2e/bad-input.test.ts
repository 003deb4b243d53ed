/**
 * Every client mistake gets a 4xx with a stable error code and a message that says what to
 * fix — never a 500 — over real HTTP against the running services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let token = '';

beforeAll(async () => {
  stack = await startStack({ env: { REACH_MAX_PAYLOAD_BYTES: '4096' } });
  const reg = await http<{ token: string }>(`${stack.registryUrl}/v1/agents/register`, {
    body: { agent_id: 'bad-input-agent', capabilities: ['echo'], max_concurrency: 1 },
  });
  token = reg.body.token;
});

afterAll(async () => {
  await stack?.stop();
});

type Case = {
  name: string;
  url: () => string;
  method?: string;
  body?: unknown;
  raw?: string;
  headers?: () => Record<string, string>;
  status: number;
  code: string;
  mentions?: string;
};

const cases: Case[] = [
  {
    name: 'missing capability',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { payload: 1 },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'capability',
  },
  {
    name: 'capability with a brace',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { capability: 'e{cho}', payload: 1 },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'capability',
  },
  {
    name: 'task_id with a hash tag',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { task_id: '{x}', capability: 'echo', payload: 1 },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'task_id',
  },
  {
    name: 'unknown field',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { capability: 'echo', payload: 1, priorty: 2 },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'priorty',
  },
  {
    name: 'timeout_s not a number',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { capability: 'echo', payload: 1, timeout_s: 'soon' },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'timeout_s',
  },
  {
    name: 'broken JSON',
    url: () => `${stack.routerUrl}/v1/tasks`,
    raw: '{"capability":',
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'not JSON at all',
    url: () => `${stack.routerUrl}/v1/tasks`,
    raw: 'hello',
    headers: () => ({ 'content-type': 'text/plain' }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'payload over the limit',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { capability: 'echo', payload: 'x'.repeat(5000) },
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: 'no live agent',
    url: () => `${stack.routerUrl}/v1/tasks`,
    body: { capability: 'nobody-serves-this', payload: 1 },
    status: 503,
    code: 'NO_AGENT',
    mentions: 'nobody-serves-this',
  },
  {
    name: 'unknown task',
    url: () => `${stack.routerUrl}/v1/tasks/no-such-task`,
    status: 404,
    code: 'TASK_NOT_FOUND',
  },
  {
    name: 'bad callback cursor',
    url: () => `${stack.routerUrl}/v1/callbacks/topic?after=yesterday`,
    status: 400,
    code: 'INVALID_QUERY',
    mentions: 'after',
  },
  {
    name: 'wait_ms too long',
    url: () => `${stack.routerUrl}/v1/callbacks/topic?wait_ms=999999`,
    status: 400,
    code: 'INVALID_QUERY',
    mentions: 'wait_ms',
  },
  {
    name: 'unknown route',
    url: () => `${stack.routerUrl}/v2/everything`,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'register without capabilities',
    url: () => `${stack.registryUrl}/v1/agents/register`,
    body: { agent_id: 'x', max_concurrency: 1 },
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'capabilities',
  },
  {
    name: 'heartbeat without a token',
    url: () => `${stack.registryUrl}/v1/agents/bad-input-agent/heartbeat`,
    body: { inflight: 0 },
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'heartbeat with a wrong token',
    url: () => `${stack.registryUrl}/v1/agents/bad-input-agent/heartbeat`,
    body: { inflight: 0 },
    headers: () => ({ authorization: 'Bearer 1.wrongwrongwrongwrongwrong' }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'heartbeat with a negative inflight',
    url: () => `${stack.registryUrl}/v1/agents/bad-input-agent/heartbeat`,
    body: { inflight: -1 },
    headers: () => ({ authorization: `Bearer ${token}` }),
    status: 400,
    code: 'INVALID_BODY',
    mentions: 'inflight',
  },
  {
    name: 'heartbeat for an unknown agent',
    url: () => `${stack.registryUrl}/v1/agents/ghost/heartbeat`,
    body: { inflight: 0 },
    headers: () => ({ authorization: `Bearer ${token}` }),
    status: 404,
    code: 'AGENT_NOT_FOUND',
  },
];

describe('bad input', () => {
  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const res = await http<{ error: string; message: string }>(c.url(), {
        ...(c.method ? { method: c.method } : {}),
        ...(c.body !== undefined ? { body: c.body } : {}),
        ...(c.raw !== undefined ? { raw: c.raw } : {}),
        ...(c.headers ? { headers: c.headers() } : {}),
      });
      expect(res.status).toBe(c.status);
      expect(res.body.error).toBe(c.code);
      expect(typeof res.body.message).toBe('string');
      if (c.mentions) expect(res.body.message).toContain(c.mentions);
    });
  }

  it('reads back a task_id of the longest length it accepts (128), and refuses 129', async () => {
    // fastify's default maxParamLength (100) answered 414 for ids of 101–128 characters.
    const longest = 'L'.repeat(128);
    const made = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: longest, capability: 'echo', payload: 1 },
    });
    expect(made.status).toBe(202);
    const read = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks/${longest}`);
    expect(read.status).toBe(200);
    expect(read.body.task_id).toBe(longest);
    const unknown = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks/${'U'.repeat(128)}`);
    expect([unknown.status, unknown.body.error]).toEqual([404, 'TASK_NOT_FOUND']);
    const tooLong = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks/${'L'.repeat(129)}`);
    expect([tooLong.status, tooLong.body.error]).toEqual([400, 'INVALID_PARAMS']);
    // Past what the router matches at all (256): the same answer, not fastify's bare 414.
    const pastRouter = await http<{ error: string }>(
      `${stack.routerUrl}/v1/tasks/${'L'.repeat(300)}`,
    );
    expect([pastRouter.status, pastRouter.body.error]).toEqual([400, 'INVALID_PARAMS']);
  });

  it('leaves nothing behind for a refused submission', async () => {
    const res = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'refused-1', capability: 'nobody-serves-this', payload: 1 },
    });
    expect(res.status).toBe(503);
    expect((await http(`${stack.routerUrl}/v1/tasks/refused-1`)).status).toBe(404);
  });
});
