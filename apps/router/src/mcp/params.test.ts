import { describe, expect, it } from 'vitest';
import { ErrorCode, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { CHECKED_METHODS, invalidParams } from './params.ts';
import { buildMcpServer } from './server.ts';
import { STATIC_TOOLS } from './tools.ts';
import type { ReachApi } from './reach-api.ts';
import type { InputSchemaReader } from './input-schemas.ts';

const request = (method: string, params?: unknown): JSONRPCRequest =>
  ({
    jsonrpc: '2.0',
    id: 1,
    method,
    ...(params === undefined ? {} : { params }),
  }) as JSONRPCRequest;

const INIT = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 't', version: '1' },
};

describe('MCP params checked before the SDK', () => {
  it('checks every method the server answers', () => {
    const server = buildMcpServer({
      api: {} as ReachApi,
      schemas: {} as InputSchemaReader,
      version: '0',
    });
    // The SDK keeps its handlers private; the test reads them to see that none is left unchecked.
    const handlers = (server.server as unknown as { _requestHandlers: Map<string, unknown> })
      ._requestHandlers;
    expect([...handlers.keys()].sort()).toEqual([...CHECKED_METHODS].sort());
  });

  it.each([
    ['initialize without clientInfo', 'initialize', { ...INIT, clientInfo: undefined }],
    ['initialize without capabilities', 'initialize', { ...INIT, capabilities: undefined }],
    ['initialize with clientInfo a string', 'initialize', { ...INIT, clientInfo: 'x' }],
    ['tools/list with a cursor of 5', 'tools/list', { cursor: 5 }],
    ['resources/list with a cursor of {}', 'resources/list', { cursor: {} }],
    [
      'resources/templates/list with a cursor of null',
      'resources/templates/list',
      { cursor: null },
    ],
    ['tools/call with name 5', 'tools/call', { name: 5 }],
    ['tools/call with arguments true', 'tools/call', { name: 'get_task', arguments: true }],
    ['resources/read with uri {}', 'resources/read', { uri: {} }],
    ['resources/read with uri "not a uri"', 'resources/read', { uri: 'not a uri' }],
    ['resources/read with uri ""', 'resources/read', { uri: '' }],
  ])('refuses %s, naming the field', (_, method, params) => {
    const why = invalidParams(request(method, params));
    expect(why).toMatch(new RegExp(`^invalid params of ${method}: `));
    expect(why).toMatch(/params\.\w+/);
  });

  it('passes params of the right shape, and methods it does not check', () => {
    expect(invalidParams(request('initialize', INIT))).toBeUndefined();
    expect(invalidParams(request('tools/list'))).toBeUndefined();
    expect(invalidParams(request('tools/list', { cursor: 'c' }))).toBeUndefined();
    expect(invalidParams(request('tools/call', { name: 'x', arguments: {} }))).toBeUndefined();
    expect(
      invalidParams(request('resources/read', { uri: 'reach://tasks/t-1/timeline' })),
    ).toBeUndefined();
    expect(invalidParams(request('prompts/list', { cursor: 5 }))).toBeUndefined();
  });

  it('names a few issues, not all of them', () => {
    const why = invalidParams(request('initialize', { protocolVersion: 1, capabilities: 2 }));
    expect(why).toContain('params.protocolVersion');
    expect(why!.length).toBeLessThan(2000);
  });
});

describe('task_id arguments', () => {
  const api: ReachApi = {
    get: async (path) => ({ status: 404, body: { path } }),
    post: async (path) => ({ status: 404, body: { path } }),
  };
  const run = (name: string, args: Record<string, unknown>) =>
    STATIC_TOOLS.find((t) => t.name === name)!.run(args, api);

  it.each(['get_task', 'cancel_task'])(
    '%s: a lone surrogate, a non-string or none is invalid params',
    async (name) => {
      for (const task_id of ['\ud800', 'a\udc00b', 5, null, {}, [], '', undefined]) {
        await expect(run(name, { task_id })).rejects.toMatchObject({
          code: ErrorCode.InvalidParams,
        });
      }
    },
  );

  it.each(['get_task', 'cancel_task'])(
    '%s: any other string goes to the API, encoded',
    async (name) => {
      for (const task_id of ['💩', 'a\u0000b', 'x'.repeat(10_000), 'a/b', '\u202e']) {
        const reply = await run(name, { task_id });
        expect((reply.body as { path: string }).path).toContain(encodeURIComponent(task_id));
      }
    },
  );
});
