/**
 * Registration (`POST /v1/agents/register` on registry-sync) with a hostile AgentCard: inline
 * (`card`: every field of the wrong type or size, skills that are no capability or name
 * `Object.prototype`'s members, placement extensions gone wrong, deep and huge cards, cards that
 * are not objects) and fetched (`card_url`: the card server's good and hostile cards, URLs the
 * service must refuse to fetch). No card claims the flow's capability: a registered agent that
 * never reads its inbox would hold the flow's tasks.
 */
import fc from 'fast-check';
import type { FuzzTarget } from './campaign.ts';
import { pushUrlArb } from './a2a-params.ts';
import { badAuthorization, wrongTypeValue } from './hostile.ts';
import { replaceAt } from './mutate.ts';
import type { FuzzRequest, Headers } from './requests.ts';

/** What the registration targets are built from. */
export interface RegistrationContext {
  registryUrl: string;
  routerUrl: string;
  /** The card server (card-server.ts) and its cards' paths. */
  cardServerUrl: string;
  cardPaths: readonly string[];
  /** Agent ids the fuzz may register again (the decoys). */
  agentIds: readonly string[];
  /** The capability registrations claim. */
  capability: string;
  auth: fc.Arbitrary<string | undefined>;
  count: number;
}

const REGISTER = '/v1/agents/register';

function validCard(capability: string): Record<string, unknown> {
  return {
    name: 'fuzz card',
    description: 'inline',
    version: '1',
    url: 'http://127.0.0.1:1/a2a',
    supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC' }],
    provider: { organization: 'fuzz', url: 'http://127.0.0.1:1' },
    skills: [{ id: capability, name: capability, tags: ['fuzz'] }],
    capabilities: {
      streaming: true,
      extensions: [
        { uri: 'urn:agent-reach:placement:v1', params: { region: 'fuzz-region', tags: ['gpu'] } },
      ],
    },
  };
}

/** Hostile values for a card's places: skill ids, regions, tags, names, URLs. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  wrongTypeValue,
  fc.constantFrom(
    '',
    'a{b}',
    '__proto__',
    'constructor',
    'valueOf',
    'x'.repeat(300),
    'x'.repeat(70_000),
    '💩',
    '\u0000',
    Array.from({ length: 100 }, (_, i) => `t${i}`),
    Array.from({ length: 100 }, (_, i) => ({ id: `fuzz-skill-${i}` })),
  ),
);

/** A whole card that is wrong as a whole. */
const wholeCard: fc.Arbitrary<unknown> = fc.oneof(
  wrongTypeValue,
  fc.constant(JSON.parse('{"__proto__":{"polluted":1},"name":"p","skills":[{"id":"fuzz-decoy"}]}')),
  fc.integer({ min: 60, max: 3000 }).map((depth) => {
    let v: unknown = { name: 'deep', skills: [] };
    for (let i = 0; i < depth; i++) v = { nested: v };
    return v;
  }),
  fc.constant({ name: 'huge', skills: [], description: 'x'.repeat(1100 * 1024) }),
);

/** Inline cards: valid, with one place made hostile, or wrong as a whole. */
function cardArb(capability: string): fc.Arbitrary<unknown> {
  const valid = validCard(capability);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid) },
    {
      weight: 10,
      arbitrary: fc.tuple(fc.nat(), hostileValue).map(([i, v]) => replaceAt(valid, i, v)),
    },
    { weight: 3, arbitrary: wholeCard },
    {
      weight: 2,
      arbitrary: fc
        .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
        .map((extra) => ({ ...extra, ...valid })),
    },
  );
}

/** URLs a registration may name its card at. */
function cardUrlArb(ctx: RegistrationContext): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(...ctx.cardPaths).map((p) => `${ctx.cardServerUrl}${p}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `${ctx.routerUrl}/a2a/${ctx.capability}/.well-known/agent-card.json`,
        `${ctx.registryUrl}/healthz`,
        `${ctx.registryUrl}/v1/agents`,
        `${ctx.registryUrl}${REGISTER}`,
        `${ctx.cardServerUrl}/card/valid#frag`,
        `${ctx.cardServerUrl}/card/valid?x=${'y'.repeat(5000)}`,
        ctx.cardServerUrl.replace('127.0.0.1', 'localhost') + '/card/valid',
        ctx.cardServerUrl.replace('http:', 'https:') + '/card/valid',
      ),
    },
    { weight: 4, arbitrary: pushUrlArb('http://127.0.0.1:1/card') },
  );
}

/** The targets: registration with an inline card, and with a card URL. */
export function registrationTargets(ctx: RegistrationContext): FuzzTarget[] {
  const agentId = fc.oneof(
    { weight: 4, arbitrary: fc.nat().map((n) => `fuzz-card-${n % 50}`) },
    ...(ctx.agentIds.length > 0
      ? [{ weight: 2, arbitrary: fc.constantFrom(...ctx.agentIds) }]
      : []),
    { weight: 1, arbitrary: fc.constantFrom('', 'a{b}', 'x'.repeat(200)) },
  );
  const common = fc.record(
    {
      agent_id: agentId,
      max_concurrency: fc.oneof(fc.constant(1), wrongTypeValue),
      capabilities: fc.constant([ctx.capability]),
    },
    { requiredKeys: ['agent_id'] },
  );
  const auth = fc.oneof(
    { weight: 9, arbitrary: ctx.auth },
    { weight: 1, arbitrary: badAuthorization },
  );
  const post = (category: string, body: unknown, a: string | string[] | undefined): FuzzRequest => {
    const headers: Headers = { 'content-type': 'application/json' };
    if (a !== undefined) headers.authorization = a;
    return {
      category,
      method: 'POST',
      target: REGISTER,
      headers,
      body: Buffer.from(JSON.stringify(body)),
    };
  };
  return [
    {
      key: `registry-sync POST ${REGISTER} card`,
      baseUrl: ctx.registryUrl,
      count: ctx.count,
      arb: fc
        .tuple(common, cardArb(ctx.capability), fc.nat(19), auth)
        .map(([body, card, roll, a]) =>
          // Now and then both a card and a URL, which the service must refuse.
          roll === 0
            ? post(
                'card-and-url',
                { ...body, card, card_url: `${ctx.cardServerUrl}/card/valid` },
                a,
              )
            : post('card', { ...body, card }, a),
        ),
    },
    {
      key: `registry-sync POST ${REGISTER} card_url`,
      baseUrl: ctx.registryUrl,
      count: ctx.count,
      arb: fc
        .tuple(common, cardUrlArb(ctx), auth)
        .map(([body, url, a]) => post('card_url', { ...body, card_url: url }, a)),
    },
  ];
}
