/**
 * The A2A gateway's JSON-RPC methods as fuzz targets (docs/A2A.md): every A2A 1.0 method and
 * every A2A 0.3 name, posted to `/a2a/<capability>` and to the fleet's `/a2a`, with and without
 * an `A2A-Version` header (the method's version, the other one, a bogus one). The params are
 * generated in each version's shape, the task ids above all: hostile, unknown, another tenant's,
 * the leg's own tasks. A well-formed call about a task that does not exist is owed `-32001`
 * (task not found), one naming a malformed id `-32602` (invalid params).
 */
import fc from 'fast-check';
import { hostileSegment, wrongTypeValue } from './hostile.ts';
import type { FuzzTarget } from './campaign.ts';
import {
  configIdArb,
  createPushParams,
  sendParamsArb,
  validConfigIdArb,
  type A2AParamsContext,
  type A2AVersion,
} from './a2a-params.ts';
import { rpcArb, type RpcCall } from './jsonrpc.ts';
import type { Headers } from './requests.ts';
import { lastEventIdArb } from './sse.ts';
import { taskIdArb, type IdKind, type KnownIds } from './task-ids.ts';

/** What the A2A targets are built from. */
export interface A2AContext extends A2AParamsContext {
  routerUrl: string;
  ids: KnownIds;
  /** A valid `Authorization` value, or none. */
  auth: fc.Arbitrary<string | undefined>;
  /** The `Authorization` values of keys that see every tenant (operators, the admin key). */
  seesAll: ReadonlySet<string>;
  /** Requests per method, and per method that takes a task id. */
  count: number;
  idCount: number;
}

/** Params besides the task id; `exact` when nothing else in them may be wrong. */
type Rest = (ctx: A2AParamsContext, exact: boolean) => fc.Arbitrary<Record<string, unknown>>;

/** One JSON-RPC method of the gateway. */
interface A2AMethod {
  name: string;
  version: A2AVersion;
  /** The param that names the task, for the methods that take one. */
  idField?: 'id' | 'taskId';
  rest?: Rest;
  /** The params of a method that names no task. */
  params?: (ctx: A2AParamsContext) => fc.Arbitrary<unknown>;
  /** Answers with an event stream. */
  streaming?: boolean;
}

const none: Rest = () => fc.constant({});
const history: Rest = (_ctx, exact) =>
  fc.record(
    { historyLength: exact ? fc.nat(10) : fc.oneof(fc.nat(), wrongTypeValue) },
    { requiredKeys: [] },
  );
const createPush =
  (version: A2AVersion): Rest =>
  (ctx, exact) =>
    createPushParams(version, undefined, ctx, exact).map((p) => {
      const { taskId: _, ...rest } = p as Record<string, unknown>;
      return rest;
    });
/** A config id a call names (a delete must name one). */
const configId =
  (field: string, required: boolean): Rest =>
  (ctx, exact) =>
    exact
      ? fc.record({ [field]: validConfigIdArb(ctx) }, { requiredKeys: required ? [field] : [] })
      : fc.record({ [field]: configIdArb(ctx) }, { requiredKeys: [] });

/** Every method the gateway takes (docs/A2A.md, "Protocol versions and method names"). */
export const A2A_METHODS: readonly A2AMethod[] = [
  { name: 'SendMessage', version: '1.0', params: (c) => sendParamsArb('1.0', c) },
  {
    name: 'SendStreamingMessage',
    version: '1.0',
    params: (c) => sendParamsArb('1.0', c),
    streaming: true,
  },
  { name: 'GetTask', version: '1.0', idField: 'id', rest: history },
  { name: 'CancelTask', version: '1.0', idField: 'id', rest: none },
  { name: 'SubscribeToTask', version: '1.0', idField: 'id', rest: none, streaming: true },
  {
    name: 'CreateTaskPushNotificationConfig',
    version: '1.0',
    idField: 'taskId',
    rest: createPush('1.0'),
  },
  {
    name: 'GetTaskPushNotificationConfig',
    version: '1.0',
    idField: 'taskId',
    rest: configId('id', false),
  },
  {
    name: 'ListTaskPushNotificationConfigs',
    version: '1.0',
    idField: 'taskId',
    rest: (_c, exact) =>
      exact
        ? fc.constant({})
        : fc.record({ pageSize: fc.oneof(fc.integer(), wrongTypeValue), pageToken: fc.string() }),
  },
  {
    name: 'DeleteTaskPushNotificationConfig',
    version: '1.0',
    idField: 'taskId',
    rest: configId('id', true),
  },
  {
    name: 'ListTasks',
    version: '1.0',
    params: () =>
      fc.record(
        {
          contextId: fc.oneof(fc.string(), wrongTypeValue),
          status: fc.oneof(fc.constantFrom('TASK_STATE_WORKING', 'x'), wrongTypeValue),
          pageSize: fc.oneof(fc.integer(), wrongTypeValue),
          pageToken: fc.string(),
          historyLength: fc.oneof(fc.nat(), wrongTypeValue),
          includeArtifacts: fc.oneof(fc.boolean(), wrongTypeValue),
        },
        { requiredKeys: [] },
      ),
  },
  {
    name: 'GetExtendedAgentCard',
    version: '1.0',
    params: () => fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
  },
  { name: 'message/send', version: '0.3', params: (c) => sendParamsArb('0.3', c) },
  {
    name: 'message/stream',
    version: '0.3',
    params: (c) => sendParamsArb('0.3', c),
    streaming: true,
  },
  { name: 'tasks/get', version: '0.3', idField: 'id', rest: history },
  { name: 'tasks/cancel', version: '0.3', idField: 'id', rest: none },
  { name: 'tasks/resubscribe', version: '0.3', idField: 'id', rest: none, streaming: true },
  {
    name: 'tasks/pushNotificationConfig/set',
    version: '0.3',
    idField: 'taskId',
    rest: createPush('0.3'),
  },
  {
    name: 'tasks/pushNotificationConfig/get',
    version: '0.3',
    idField: 'id',
    rest: configId('pushNotificationConfigId', false),
  },
  { name: 'tasks/pushNotificationConfig/list', version: '0.3', idField: 'id', rest: none },
  {
    name: 'tasks/pushNotificationConfig/delete',
    version: '0.3',
    idField: 'id',
    rest: configId('pushNotificationConfigId', true),
  },
  {
    name: 'agent/getAuthenticatedExtendedCard',
    version: '0.3',
    params: () => fc.constant(undefined),
  },
];

/** The targets: one per method, `router a2a <method>`. */
export function a2aTargets(ctx: A2AContext): FuzzTarget[] {
  return A2A_METHODS.map((m) => ({
    key: `router a2a ${m.name}`,
    baseUrl: ctx.routerUrl,
    count: m.idField ? ctx.idCount : ctx.count,
    arb: rpcArb(callsOf(m, ctx), { path: `/a2a/${ctx.capability}`, auth: ctx.auth }),
  }));
}

/** Where a call goes: the flow's capability, the fleet, a capability nobody serves, a hostile one. */
function pathArb(ctx: A2AContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant(`/a2a/${ctx.capability}`) },
    { weight: 8, arbitrary: fc.constant('/a2a') },
    { weight: 2, arbitrary: fc.constant(`/a2a/${ctx.nobody}`) },
    { weight: 1, arbitrary: hostileSegment.map((s) => `/a2a/${s}`) },
  );
}

/** The `A2A-Version` header of a call, and whether it names the method's own version (or none). */
function versionArb(version: A2AVersion): fc.Arbitrary<{ headers: Headers; matches: boolean }> {
  const other = version === '1.0' ? '0.3' : '1.0';
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant({ headers: {}, matches: true }) },
    { weight: 5, arbitrary: fc.constant({ headers: { 'a2a-version': version }, matches: true }) },
    { weight: 1, arbitrary: fc.constant({ headers: { 'a2a-version': other }, matches: false }) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<string | string[]>('', '2.0', '1', ' 1.0', '0.3.0', 'x'.repeat(2000), [
          '1.0',
          '0.3',
        ])
        .map((v) => ({ headers: { 'a2a-version': v }, matches: false })),
    },
  );
}

function callsOf(m: A2AMethod, ctx: A2AContext): fc.Arbitrary<RpcCall> {
  const lastEventId = m.streaming
    ? fc.option(lastEventIdArb, { nil: undefined, freq: 3 })
    : fc.constant(undefined);
  const frame = fc.record({ path: pathArb(ctx), version: versionArb(m.version), lastEventId });
  const call = (
    f: {
      path: string;
      version: { headers: Headers; matches: boolean };
      lastEventId: string | undefined;
    },
    category: string,
    params: unknown,
  ): RpcCall => ({
    category:
      f.lastEventId !== undefined ? 'last-event-id' : f.version.matches ? category : 'a2a-version',
    method: m.name,
    params,
    path: f.path,
    headers: {
      ...f.version.headers,
      ...(f.lastEventId !== undefined ? { 'last-event-id': f.lastEventId } : {}),
    },
  });
  if (!m.idField || !m.rest) {
    const params = m.params?.(ctx) ?? fc.constant(undefined);
    return fc.tuple(frame, params).map(([f, p]) => call(f, 'valid', p));
  }
  const { idField, rest } = m;
  return fc.tuple(frame, taskIdArb(ctx.ids), fc.nat(9)).chain(([f, id, roll]) => {
    // Most calls are otherwise well formed, so that the id decides the answer.
    const exact = roll < 7;
    return rest(ctx, exact).map((r): RpcCall => {
      const c = call(f, exact ? `${id.kind}-id` : 'hostile-params', { ...r, [idField]: id.value });
      const owed = exact && f.version.matches && f.lastEventId === undefined;
      return owed ? { ...c, expectRpc: expectation(id.kind, id.value, ctx.seesAll) } : c;
    });
  });
}

/**
 * What a call owed an exact answer may get: `-32602` for a malformed id, `-32001` for a task that
 * does not exist or that the caller may not see (another tenant's, unless the key sees every
 * tenant); anything but `-32603` for the rest.
 */
function expectation(
  kind: IdKind,
  value: unknown,
  seesAll: ReadonlySet<string>,
): RpcCall['expectRpc'] {
  if (kind === 'malformed') return ['-32602'];
  if (kind === 'unknown') return ['-32001'];
  if (kind !== 'foreign') return undefined;
  const scoped = String(value).includes('/');
  return (auth) => (scoped && auth !== undefined && seesAll.has(auth) ? undefined : ['-32001']);
}
