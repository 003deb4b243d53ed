/**
 * A client's mistake over MCP is the client's: the exact requests a fuzz of `POST /mcp` found
 * answered -32603 (internal error) are answered -32602 (invalid params), and a well-formed id of
 * no task is still the tools' TASK_NOT_FOUND. Against the router app with a real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Redis } from 'ioredis';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../index.ts';

let router: RouterService;
let prefix: string;

beforeAll(async () => {
  prefix = randomPrefix();
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix },
    { logger: pino({ level: 'silent' }) },
  );
});

afterAll(async () => {
  await router?.close();
  const redis = new Redis(testServices().redisUrl);
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
});

interface RpcAnswer {
  id?: unknown;
  result?: { isError?: boolean; structuredContent?: { error?: string } };
  error?: { code: number; message: string };
}

/** One JSON-RPC request to `/mcp`, as an MCP client posts it; its HTTP status and answer. */
async function rpc(method: string, params?: unknown): Promise<{ status: number; body: RpcAnswer }> {
  const res = await router.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return { status: res.statusCode, body: res.json<RpcAnswer>() };
}

const INIT = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'int', version: '1' },
};
const { clientInfo: _c, ...noClientInfo } = INIT;
const { capabilities: _k, ...noCapabilities } = INIT;

describe('MCP: a malformed param is -32602', () => {
  it.each([
    ['initialize without clientInfo', 'initialize', noClientInfo],
    ['initialize without capabilities', 'initialize', noCapabilities],
    ['tools/list with a cursor of 5', 'tools/list', { cursor: 5 }],
    ['resources/list with a cursor of {}', 'resources/list', { cursor: {} }],
    [
      'resources/templates/list with a cursor of true',
      'resources/templates/list',
      { cursor: true },
    ],
    ['tools/call with "name":5', 'tools/call', { name: 5, arguments: {} }],
    ['tools/call with "arguments":true', 'tools/call', { name: 'get_task', arguments: true }],
    ['resources/read with "uri":{}', 'resources/read', { uri: {} }],
    ['resources/read with "uri":"not a uri"', 'resources/read', { uri: 'not a uri' }],
    [
      'get_task with a lone surrogate',
      'tools/call',
      { name: 'get_task', arguments: { task_id: '\ud800' } },
    ],
    [
      'cancel_task with a lone surrogate',
      'tools/call',
      { name: 'cancel_task', arguments: { task_id: '\ud800' } },
    ],
    ['get_task with a task_id of 5', 'tools/call', { name: 'get_task', arguments: { task_id: 5 } }],
  ])('%s', async (_, method, params) => {
    const { status, body } = await rpc(method, params);
    expect(status).toBe(200);
    expect(body.id).toBe(7);
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).not.toBe('');
  });

  it('still answers params of the right shape', async () => {
    expect((await rpc('initialize', INIT)).body.result).toBeDefined();
    expect((await rpc('tools/list', { cursor: 'c' })).body.result).toBeDefined();
    // A method the server does not have stays "method not found", whatever its params.
    expect((await rpc('prompts/list', { cursor: 5 })).body.error?.code).toBe(-32601);
  });
});

describe('MCP: task ids the tools take', () => {
  const toolAnswer = async (name: string, task_id: unknown) =>
    (await rpc('tools/call', { name, arguments: { task_id } })).body;

  it.each(['get_task', 'cancel_task'])(
    '%s: an id of no task is TASK_NOT_FOUND; hostile strings are a tool error, never -32603',
    async (name) => {
      const unknown = await toolAnswer(name, 'mcp-int-unknown-1');
      expect(unknown.result?.structuredContent?.error).toBe('TASK_NOT_FOUND');
      for (const id of ['a\u0000b', 'a\nb', '\u202e1-ksat', '💩', 'x'.repeat(10 * 1024), '../x']) {
        const answer = await toolAnswer(name, id);
        expect(answer.error).toBeUndefined();
        expect(answer.result?.isError).toBe(true);
      }
    },
  );

  // Past fastify's default maxParamLength of 100: service-kit raises it for scoped ids.
  it('an unknown id of 101–128 characters is TASK_NOT_FOUND', async () => {
    for (const length of [101, 128]) {
      const id = 'mcp-int-unknown-'.padEnd(length, 'z');
      for (const name of ['get_task', 'cancel_task']) {
        const answer = await toolAnswer(name, id);
        expect(answer.result?.structuredContent?.error).toBe('TASK_NOT_FOUND');
      }
    }
  });
});
