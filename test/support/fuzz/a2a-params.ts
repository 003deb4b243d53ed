/**
 * The params of A2A calls for the fuzz, in both wire shapes the gateway takes: A2A 1.0 (protobuf
 * JSON: `ROLE_USER`, parts `{text}` / `{data}` / `{url}` / `{raw}`, `returnImmediately`,
 * `taskPushNotificationConfig`) and A2A 0.3 (`kind`-tagged parts, `blocking`,
 * `pushNotificationConfig`). Valid shapes mostly, with hostile values where a client controls
 * them: ids, part contents, push URLs and tokens, metadata.
 */
import fc from 'fast-check';
import { wrongTypeValue } from './hostile.ts';
import { freshTaskId } from './task-ids.ts';

/** The A2A protocol version of a method: picks the params' shape. */
export type A2AVersion = '1.0' | '0.3';

/** What the params are built from. */
export interface A2AParamsContext {
  /** Ids of tasks that exist (a message sent again with one names that task). */
  knownIds: readonly string[];
  /** Push config ids saved on the known tasks. */
  pushConfigIds: readonly string[];
  /** A loopback webhook that answers every POST (push notifications may be sent to it). */
  hookUrl: string;
  /** The capability live agents serve (a blocking send there ends in milliseconds). */
  capability: string;
  /** A capability no agent serves (a send there is `NO_AGENT`). */
  nobody: string;
}

/** Push URLs a client may name: the loopback hook, and ones the gateway must refuse. */
export function pushUrlArb(hookUrl: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(hookUrl) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'http://example.com/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://user:pw@127.0.0.1/hook',
        'ftp://127.0.0.1/hook',
        'file:///etc/passwd',
        'javascript:alert(1)',
        'data:text/plain,x',
        'http://127.0.0.1:0/hook',
        'http://127.0.0.1:99999/hook',
        'http://[::1]:1/hook',
        'http://0.0.0.0:1/hook',
        'http://127.1:1/hook',
        'http://%00/',
        'http://ëxample.com/',
        'not a url',
        '',
        `http://127.0.0.1/${'x'.repeat(10 * 1024)}`,
      ),
    },
    { weight: 1, arbitrary: wrongTypeValue },
  );
}

/** Push config ids: saved ones, new ones, and ones that are no id. */
export function configIdArb(ctx: A2AParamsContext): fc.Arbitrary<unknown> {
  return fc.oneof(
    ...(ctx.pushConfigIds.length > 0 ? [fc.constantFrom(...ctx.pushConfigIds)] : []),
    fc.nat().map((n) => `cfg-${n}`),
    fc.constantFrom('', ' ', 'a{b}', 'x'.repeat(2000), '\u0000', '💩', '../x'),
    wrongTypeValue,
  );
}

/** A valid push config id: a saved one or a new one (a delete must name one). */
export function validConfigIdArb(ctx: A2AParamsContext): fc.Arbitrary<string> {
  return fc.oneof(
    ...(ctx.pushConfigIds.length > 0 ? [fc.constantFrom(...ctx.pushConfigIds)] : []),
    fc.nat().map((n) => `cfg-${n}`),
  );
}

const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(64 * 1024), '\u0000', '\ud800') },
);

/** Message ids: fresh (a new task), known (that task again), or no id (a new UUID). */
function messageIdArb(ctx: A2AParamsContext): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: freshTaskId },
    ...(ctx.knownIds.length > 0
      ? [{ weight: 2, arbitrary: fc.constantFrom(...ctx.knownIds) }]
      : []),
    { weight: 2, arbitrary: fc.constantFrom('', 'a{b}', 'x y', 'x'.repeat(200), '💩') },
    { weight: 1, arbitrary: wrongTypeValue },
  );
}

/** A part of a 1.0 message. */
const part10: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: text.map((t) => ({ text: t })) },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((d) => ({ data: d })) },
  {
    weight: 1,
    arbitrary: fc.record({
      url: fc.oneof(fc.webUrl(), fc.string()),
      mediaType: fc.constantFrom('text/plain', 'image/png', '', 'x/'),
      filename: fc.constantFrom('a.txt', '', '../../etc/passwd'),
    }),
  },
  { weight: 1, arbitrary: fc.base64String({ maxLength: 64 }).map((raw) => ({ raw })) },
  { weight: 1, arbitrary: fc.constantFrom({}, { text: 1 }, { data: undefined }, { raw: '%%%' }) },
);

/** A part of a 0.3 message. */
const part03: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: text.map((t) => ({ kind: 'text', text: t })) },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((d) => ({ kind: 'data', data: d })) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.webUrl().map((uri) => ({ kind: 'file', file: { uri, mimeType: 'text/plain' } })),
      fc.base64String({ maxLength: 64 }).map((bytes) => ({ kind: 'file', file: { bytes } })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      { kind: 'file' },
      { kind: 'file', file: {} },
      { kind: 'file', file: null },
      { kind: 'data' },
      { kind: 'text' },
      { kind: 'nope' },
      {},
      null,
      'x',
    ),
  },
);

/** Where a send names its capability: the endpoint's, or `metadata.capability` at `/a2a`. */
function capabilityMetadata(
  ctx: A2AParamsContext,
): fc.Arbitrary<Record<string, unknown> | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({ capability: ctx.capability }) },
    { weight: 2, arbitrary: fc.constant({ capability: ctx.nobody }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constantFrom('', 'a{b}', 'x'.repeat(200), '__proto__'), wrongTypeValue)
        .map((c) => ({ capability: c })),
    },
  );
}

/** The params of a send (`SendMessage`, `message/send` and their streaming forms). */
export function sendParamsArb(version: A2AVersion, ctx: A2AParamsContext): fc.Arbitrary<unknown> {
  const parts = fc.array(version === '1.0' ? part10 : part03, { minLength: 0, maxLength: 4 });
  const role =
    version === '1.0'
      ? fc.oneof(
          { weight: 8, arbitrary: fc.constant('ROLE_USER') },
          {
            weight: 1,
            arbitrary: fc.constantFrom('ROLE_AGENT', 'ROLE_UNSPECIFIED', 'user', '', 7),
          },
        )
      : fc.oneof(
          { weight: 8, arbitrary: fc.constant('user') },
          { weight: 1, arbitrary: fc.constantFrom('agent', 'ROLE_USER', '', null) },
        );
  const push = fc.record(
    {
      url: pushUrlArb(ctx.hookUrl),
      token: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('t'.repeat(10_000))),
      id: configIdArb(ctx),
    },
    { requiredKeys: ['url'] },
  );
  const configuration =
    version === '1.0'
      ? fc.record(
          {
            returnImmediately: fc.oneof(fc.boolean(), wrongTypeValue),
            taskPushNotificationConfig: push,
            acceptedOutputModes: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
            historyLength: fc.oneof(fc.nat(), wrongTypeValue),
          },
          { requiredKeys: [] },
        )
      : fc.record(
          {
            blocking: fc.oneof(fc.boolean(), wrongTypeValue),
            pushNotificationConfig: push,
            acceptedOutputModes: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
          },
          { requiredKeys: [] },
        );
  const message = fc.record(
    {
      ...(version === '0.3' ? { kind: fc.constant('message') } : {}),
      messageId: messageIdArb(ctx),
      role,
      parts,
      contextId: fc.oneof(
        freshTaskId,
        fc.constantFrom('', 'a{b}', 'x'.repeat(200)),
        wrongTypeValue,
      ),
      taskId: fc.oneof(
        ...(ctx.knownIds.length > 0 ? [fc.constantFrom(...ctx.knownIds)] : []),
        fc.constantFrom('', 'a{b}'),
      ),
      metadata: capabilityMetadata(ctx),
    },
    { requiredKeys: ['messageId', 'role', 'parts'] },
  );
  return fc.record(
    { message, configuration, metadata: capabilityMetadata(ctx) },
    { requiredKeys: ['message'] },
  );
}

/** The params of a push config's creation, named for task `taskId`. */
export function createPushParams(
  version: A2AVersion,
  taskId: unknown,
  ctx: A2AParamsContext,
  validUrl: boolean,
): fc.Arbitrary<unknown> {
  const authentication =
    version === '1.0'
      ? fc.record({ scheme: fc.constantFrom('Bearer', 'Basic', ''), credentials: fc.string() })
      : fc.record({
          schemes: fc.array(fc.constantFrom('Bearer', 'Basic', '')),
          credentials: fc.string(),
        });
  // A call owed "not found" has nothing else wrong with it: a loopback URL, a valid id.
  const config = validUrl
    ? fc.record(
        {
          url: fc.constant(ctx.hookUrl),
          id: validConfigIdArb(ctx),
          token: fc.string({ maxLength: 20 }),
          authentication,
        },
        { requiredKeys: ['url'] },
      )
    : fc.record(
        {
          url: pushUrlArb(ctx.hookUrl),
          id: configIdArb(ctx),
          token: fc.oneof(fc.string({ maxLength: 20 }), wrongTypeValue),
          authentication: fc.oneof(authentication, wrongTypeValue),
        },
        { requiredKeys: ['url'] },
      );
  return version === '1.0'
    ? config.map((c) => ({ taskId, ...c }))
    : config.map((c) => ({ taskId, pushNotificationConfig: c }));
}
