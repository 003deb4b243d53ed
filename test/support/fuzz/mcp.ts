/**
 * The router's MCP endpoint as fuzz targets (docs/MCP.md: Streamable HTTP JSON-RPC at `POST
 * /mcp`, hidden from /docs): every method the server answers, a call of every tool with
 * generated arguments, methods it does not have, and notifications; with the transport's own
 * headers (`Accept`, `MCP-Protocol-Version`, `Mcp-Session-Id`) sometimes wrong. A tool call about
 * a task that does not exist is owed the tool's `TASK_NOT_FOUND`; one naming no task id at all,
 * invalid params.
 */
import fc from 'fast-check';
import type { FuzzTarget } from './campaign.ts';
import { latin1, safeEncode, wrongTypeValue } from './hostile.ts';
import { rpcArb, type RpcCall, type RpcEndpoint } from './jsonrpc.ts';
import type { Headers } from './requests.ts';
import { freshTaskId, taskIdArb, type IdKind, type KnownIds, type NamedId } from './task-ids.ts';

/** What the MCP targets are built from. */
export interface McpContext {
  routerUrl: string;
  ids: KnownIds;
  auth: fc.Arbitrary<string | undefined>;
  seesAll: ReadonlySet<string>;
  /** The capability live agents serve (its tool is `run_<capability>`), and one nobody serves. */
  capability: string;
  nobody: string;
  count: number;
  idCount: number;
}

/** The path of the endpoint, and the `Accept` every MCP client sends. */
export const MCP_PATH = '/mcp';
export const MCP_HEADERS: Headers = { accept: 'application/json, text/event-stream' };

/** Protocol versions the SDK negotiates, and ones it does not know. */
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const protocolVersion = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PROTOCOL_VERSIONS) },
  { weight: 1, arbitrary: fc.constantFrom('', '1999-01-01', '2025-13-45', 'x'.repeat(2000)) },
  { weight: 1, arbitrary: wrongTypeValue },
);

/** A task id in a resource URI, percent-encoded (a lone surrogate byte by byte). */
function uriSegment(id: string): string {
  try {
    return encodeURIComponent(id);
  } catch {
    return safeEncode(id);
  }
}

/** One method (or tool) of the endpoint, as a fuzz target. */
interface McpMethod {
  key: string;
  /** Takes a task id: fuzzed with the id count. */
  takesId?: boolean;
  calls: (ctx: McpContext) => fc.Arbitrary<RpcCall>;
}

const cursor = fc.record({ cursor: fc.oneof(fc.string(), wrongTypeValue) }, { requiredKeys: [] });
const plain = (method: string, params: fc.Arbitrary<unknown>, category = 'valid') =>
  params.map((p): RpcCall => ({ category, method, params: p }));
const tool = (name: unknown, args: unknown, category = 'valid'): RpcCall => ({
  category,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A tool call or resource read about task `id`, with the answer it is owed. */
function aboutTask(
  id: NamedId,
  ctx: McpContext,
  make: (value: unknown) => RpcCall,
  owed: Partial<Record<IdKind, readonly string[]>>,
): RpcCall {
  const call = { ...make(id.value), category: `${id.kind}-id` };
  const expect = owed[id.kind];
  if (!expect) return call;
  if (id.kind !== 'foreign' || !String(id.value).includes('/'))
    return { ...call, expectRpc: expect };
  return {
    ...call,
    expectRpc: (auth) => (auth !== undefined && ctx.seesAll.has(auth) ? undefined : expect),
  };
}

/** Owed by `get_task` and `cancel_task` (entries ending in `:` match any answer they start). */
const TOOL_OWED: Partial<Record<IdKind, readonly string[]>> = {
  unknown: ['tool:TASK_NOT_FOUND'],
  foreign: ['tool:TASK_NOT_FOUND'],
  malformed: ['-32602', 'tool:'],
  odd: ['-32602'],
};

const METHODS: readonly McpMethod[] = [
  {
    key: 'initialize',
    calls: () =>
      plain(
        'initialize',
        fc.record(
          {
            protocolVersion,
            capabilities: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 })),
            clientInfo: fc.oneof(
              fc.record({ name: fc.string(), version: fc.string() }),
              wrongTypeValue,
            ),
          },
          { requiredKeys: ['protocolVersion'] },
        ),
      ),
  },
  {
    key: 'ping',
    calls: () => plain('ping', fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })),
  },
  { key: 'tools/list', calls: () => plain('tools/list', fc.option(cursor, { nil: undefined })) },
  {
    key: 'resources/list',
    calls: () => plain('resources/list', fc.option(cursor, { nil: undefined })),
  },
  {
    key: 'resources/templates/list',
    calls: () => plain('resources/templates/list', fc.option(cursor, { nil: undefined })),
  },
  {
    key: 'resources/read',
    takesId: true,
    calls: (ctx) =>
      fc.oneof(
        {
          weight: 8,
          arbitrary: taskIdArb(ctx.ids).map((id) =>
            aboutTask(
              id,
              ctx,
              (v) => ({
                category: '',
                method: 'resources/read',
                params: {
                  uri: `reach://tasks/${uriSegment(typeof v === 'string' ? v : JSON.stringify(v))}/timeline`,
                },
              }),
              { unknown: ['-32602'], foreign: ['-32602'], malformed: ['-32602'] },
            ),
          ),
        },
        {
          weight: 2,
          arbitrary: plain(
            'resources/read',
            fc.record({
              uri: fc.oneof(
                fc.constantFrom(
                  '',
                  'not a uri',
                  'reach://tasks/',
                  'reach://tasks//timeline',
                  'reach://tasks/x/timeline/extra',
                  'reach://tasks/%E0%A4%A/timeline',
                  'reach://tasks/%2F%2F/timeline',
                  'reach://other/x',
                  'file:///etc/passwd',
                  'http://127.0.0.1/',
                  `reach://tasks/${'x'.repeat(10_000)}/timeline`,
                ),
                fc.webUrl(),
                wrongTypeValue,
              ),
            }),
            'hostile-uri',
          ),
        },
      ),
  },
  {
    key: 'tools/call get_task',
    takesId: true,
    calls: (ctx) =>
      taskIdArb(ctx.ids).map((id) =>
        aboutTask(id, ctx, (v) => tool('get_task', { task_id: v }), TOOL_OWED),
      ),
  },
  {
    key: 'tools/call cancel_task',
    takesId: true,
    calls: (ctx) =>
      taskIdArb(ctx.ids).map((id) =>
        aboutTask(id, ctx, (v) => tool('cancel_task', { task_id: v }), TOOL_OWED),
      ),
  },
  {
    key: 'tools/call submit_task',
    calls: (ctx) =>
      fc
        .record(
          {
            capability: fc.oneof(
              { weight: 6, arbitrary: fc.constant(ctx.capability) },
              { weight: 2, arbitrary: fc.constant(ctx.nobody) },
              {
                weight: 2,
                arbitrary: fc.oneof(fc.constantFrom('', 'a{b}', 'x'.repeat(200)), wrongTypeValue),
              },
            ),
            payload: fc.jsonValue({ maxDepth: 3 }),
            // A wait is held at most 50 s; the flow's capability answers in milliseconds.
            wait_ms: fc.oneof(fc.constantFrom(0, 100, 200), wrongTypeValue),
            task_id: fc.oneof(
              freshTaskId,
              ...(ctx.ids.own.length > 0 ? [fc.constantFrom(...ctx.ids.own)] : []),
              fc.constantFrom('', 'a{b}', 'x'.repeat(200)),
              wrongTypeValue,
            ),
          },
          { requiredKeys: [] },
        )
        .map((args) => tool('submit_task', args)),
  },
  {
    key: 'tools/call list_agents',
    calls: () =>
      fc
        .record({ capability: fc.oneof(fc.string(), wrongTypeValue) }, { requiredKeys: [] })
        .map((args) => tool('list_agents', args)),
  },
  {
    key: 'tools/call run_<capability>',
    calls: (ctx) =>
      fc
        .oneof(
          {
            weight: 8,
            arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 })),
          },
          { weight: 1, arbitrary: wrongTypeValue },
        )
        .map((args) => tool(`run_${ctx.capability}`, args)),
  },
  {
    key: 'tools/call unknown tool',
    calls: (ctx) =>
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom(
              `run_${ctx.nobody}`,
              'run_',
              '',
              'x'.repeat(200),
              'get_task ',
              'GET_TASK',
              '__proto__',
              'constructor',
            ),
            fc.string({ maxLength: 30 }),
            wrongTypeValue,
          ),
          fc.jsonValue({ maxDepth: 2 }),
        )
        .map(([name, args]) => tool(name, args, 'unknown-tool')),
  },
  {
    key: 'unknown method',
    calls: () =>
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom(
              'prompts/list',
              'prompts/get',
              'completion/complete',
              'logging/setLevel',
              'sampling/createMessage',
              'roots/list',
              'elicitation/create',
              'resources/subscribe',
              'resources/unsubscribe',
              'tasks/get',
              'tasks/list',
              'tasks/result',
              'tasks/cancel',
              'rpc.discover',
              '',
              '__proto__',
              'constructor',
              'tools/call/extra',
            ),
            fc.string({ maxLength: 30 }),
          ),
          fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
        )
        .map(([method, params]): RpcCall => ({ category: 'unknown-method', method, params })),
  },
  {
    key: 'notifications',
    calls: () =>
      fc
        .tuple(
          fc.constantFrom(
            'notifications/initialized',
            'notifications/cancelled',
            'notifications/progress',
            'notifications/roots/list_changed',
            'notifications/message',
            'notifications/nope',
          ),
          fc.option(
            fc.oneof(
              fc.record({ requestId: fc.oneof(fc.nat(), wrongTypeValue), reason: fc.string() }),
              fc.record({ progressToken: wrongTypeValue, progress: wrongTypeValue }),
              fc.jsonValue({ maxDepth: 2 }),
            ),
            { nil: undefined },
          ),
        )
        .map(([method, params]): RpcCall => ({
          category: 'notification',
          method,
          params,
          notification: true,
        })),
  },
];

/** The transport's headers of a call: as clients send them, or wrong in one way. */
const transportHeaders: fc.Arbitrary<{ headers: Headers; plain: boolean }> = fc.oneof(
  { weight: 14, arbitrary: fc.constant({ headers: {}, plain: true }) },
  {
    weight: 3,
    arbitrary: protocolVersion.map((v) => ({
      headers: {
        'mcp-protocol-version': latin1(typeof v === 'string' ? v : (JSON.stringify(v) ?? '')),
      },
      plain: false,
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<string | string[]>(
        '',
        'application/json',
        'text/event-stream',
        '*/*',
        'text/html',
        ['application/json', 'text/event-stream'],
      )
      .map((accept) => ({ headers: { accept }, plain: false })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('x', '', 'a'.repeat(4096), '../../x')
      .map((id) => ({ headers: { 'mcp-session-id': id }, plain: false })),
  },
);

/** The endpoint as the HTTP targets post to it. */
function endpointOf(ctx: McpContext): RpcEndpoint {
  return { path: MCP_PATH, headers: MCP_HEADERS, auth: ctx.auth };
}

/** A method's calls with the transport's headers mixed in (an answer is owed only without). */
function withTransport(calls: fc.Arbitrary<RpcCall>): fc.Arbitrary<RpcCall> {
  return fc.tuple(calls, transportHeaders).map(([call, t]) =>
    t.plain
      ? call
      : {
          ...call,
          category: 'transport-headers',
          headers: { ...call.headers, ...t.headers },
          expectRpc: undefined,
        },
  );
}

/** The targets over HTTP: one per method or tool, `router mcp <method>`. */
export function mcpTargets(ctx: McpContext): FuzzTarget[] {
  return METHODS.map((m) => ({
    key: `router mcp ${m.key}`,
    baseUrl: ctx.routerUrl,
    count: m.takesId ? ctx.idCount : ctx.count,
    arb: rpcArb(withTransport(m.calls(ctx)), endpointOf(ctx)),
  }));
}

/** Every method's calls, as the stdio relay's lines are made from (credentials are the relay's). */
export function mcpCalls(ctx: McpContext): fc.Arbitrary<RpcCall> {
  return fc.oneof(...METHODS.map((m) => m.calls(ctx)));
}
