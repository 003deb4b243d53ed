/**
 * Registering with an A2A AgentCard on the real test Redis, keys required: inline or fetched from
 * a loopback HTTP server of the test's own (REACH_OUTBOUND_LOOPBACK=on), skills become
 * capabilities and the placement extension region and tags, GET /v1/agents/:id/card serves it to
 * those who see the agent, and a card from a host not allowed (loopback without the opt-in), a
 * bad card or a failed fetch is refused with its code; a failed fetch always with the same words.
 */
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { PLACEMENT_EXTENSION_URI, reachKeys, type AgentView } from '@agent-reach/protocol';
import { ApiKeyStore } from '@agent-reach/service-kit';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import type { RegistryOptions } from '../options.ts';

const ADMIN_KEY = `admin-${'c'.repeat(40)}`;
const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const card = {
  name: 'Recipe Agent',
  description: 'Finds and plans recipes',
  version: '2.0.1',
  provider: { organization: 'Acme', url: 'https://acme.example' },
  skills: [
    { id: 'recipes.find', name: 'Find', tags: ['cooking'] },
    { id: 'recipes.plan', name: 'Plan', tags: ['cooking'] },
  ],
  capabilities: {
    streaming: true,
    extensions: [{ uri: PLACEMENT_EXTENSION_URI, params: { region: 'eu-west', tags: ['oven'] } }],
  },
};

let cardServer: Server;
let cardBase = '';
/** Requests the card server got. */
let cardRequests = 0;
/** The service's log lines, parsed. */
let logLines: Record<string, unknown>[] = [];
let service: RegistryService;
let redis: Redis;
let prefix: string;

beforeAll(async () => {
  // The cards an agent publishes, on loopback; /slow never answers, /big is over the cap.
  cardServer = createServer((req, res) => {
    cardRequests += 1;
    if (req.url === '/card.json') res.end(JSON.stringify({ ...card, name: 'Fetched Agent' }));
    else if (req.url === '/big.json') res.end(JSON.stringify({ ...card, pad: 'x'.repeat(4096) }));
    else if (req.url === '/chunked') {
      // No content-length: the cap is met while reading.
      res.write(JSON.stringify({ ...card, pad: 'x'.repeat(1500) }));
      res.end(' '.repeat(1500));
    } else if (req.url === '/not-json') res.end('<html>');
    else if (req.url === '/bad-card.json')
      res.end(JSON.stringify({ name: 'x', skills: [{ id: 'a b' }] }));
    else if (req.url === '/moved') res.writeHead(302, { location: '/card.json' }).end();
    else if (req.url !== '/slow') res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
  cardBase = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  cardServer.closeAllConnections();
  await new Promise((resolve) => cardServer.close(resolve));
});

/** A registry-sync with keys required, its log kept in `logLines`. */
async function startService(opts: Partial<RegistryOptions>): Promise<RegistryService> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      auth: 'required',
      adminKey: ADMIN_KEY,
      probeIntervalMs: 60_000,
      // Long enough for a loaded machine; only /slow waits it out.
      cardTimeoutMs: 2000,
      cardMaxBytes: 2048,
      sweepIntervalMs: 100,
      ...opts,
    },
    { logger: pino({ level: 'info' }, sink) },
  );
}

beforeEach(async () => {
  prefix = randomPrefix();
  logLines = [];
  // The card server is on loopback: allowed by the operator's opt-in.
  service = await startService({ outboundLoopback: 'on' });
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await service.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

function register(body: Record<string, unknown>, headers: Record<string, string> = admin) {
  return service.app.inject({ method: 'POST', url: '/v1/agents/register', payload: body, headers });
}
const get = (url: string, headers: Record<string, string> = admin) =>
  service.app.inject({ url, headers });

describe('registering with an AgentCard', () => {
  it('inline: skills are its capabilities, placement and card fields fill region, tags and meta', async () => {
    const res = await register({ agent_id: 'chef', max_concurrency: 2, card });
    expect(res.statusCode, res.body).toBe(200);
    const view = (await get('/v1/agents/chef')).json<AgentView>();
    expect(view).toMatchObject({
      capabilities: ['recipes.find', 'recipes.plan'],
      region: 'eu-west',
      tags: ['oven'],
      meta: { card_name: 'Recipe Agent', card_version: '2.0.1', card_provider: 'Acme' },
    });
    const served = await get('/v1/agents/chef/card');
    expect(served.statusCode).toBe(200);
    expect(served.json()).toEqual(card);
    // Kept under the agent's hash tag, beside its record.
    expect(await redis.exists(reachKeys(prefix).agentCard('chef'))).toBe(1);
  });

  it('merges the capabilities and tags it lists; its own region and meta win', async () => {
    const res = await register({
      agent_id: 'chef',
      max_concurrency: 1,
      capabilities: ['echo'],
      region: 'us-east',
      tags: ['gpu'],
      meta: { card_name: 'Own name' },
      card,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await get('/v1/agents/chef')).json<AgentView>()).toMatchObject({
      capabilities: ['echo', 'recipes.find', 'recipes.plan'],
      region: 'us-east',
      tags: ['gpu', 'oven'],
      meta: { card_name: 'Own name', card_version: '2.0.1' },
    });
  });

  it('by URL from a loopback host: fetched, mapped and served as fetched', async () => {
    const res = await register({
      agent_id: 'fetched',
      max_concurrency: 1,
      card_url: `${cardBase}/card.json`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await get('/v1/agents/fetched')).json<AgentView>()).toMatchObject({
      capabilities: ['recipes.find', 'recipes.plan'],
      meta: { card_name: 'Fetched Agent' },
    });
    expect((await get('/v1/agents/fetched/card')).json()).toMatchObject({ name: 'Fetched Agent' });
  });

  it('a registration without a card drops the card of the one before', async () => {
    expect((await register({ agent_id: 'chef', max_concurrency: 1, card })).statusCode).toBe(200);
    const again = await register({ agent_id: 'chef', max_concurrency: 1, capabilities: ['echo'] });
    expect(again.statusCode).toBe(200);
    const served = await get('/v1/agents/chef/card');
    expect(served.statusCode).toBe(404);
    expect(served.json()).toMatchObject({ error: 'CARD_NOT_FOUND' });
  });

  it('goes with the record of a drained agent', async () => {
    const res = await register({ agent_id: 'leaving', max_concurrency: 1, card });
    expect(res.statusCode).toBe(200);
    const { token } = res.json<{ token: string }>();
    const bye = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/leaving/deregister',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bye.statusCode).toBe(200);
    // Nothing was delivered: the next lease sweep removes the agent, its card with it.
    await waitFor(async () => (await get('/v1/agents/leaving/card')).statusCode === 404, {
      message: 'drained agent removed',
    });
    expect((await get('/v1/agents/leaving/card')).json()).toMatchObject({
      error: 'AGENT_NOT_FOUND',
    });
    expect(await redis.exists(reachKeys(prefix).agentCard('leaving'))).toBe(0);
  });
});

describe('refusals', () => {
  const refused = async (body: Record<string, unknown>, status: number, error: string) => {
    const res = await register({ agent_id: 'bad', max_concurrency: 1, ...body });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json()).toMatchObject({ error });
    return res.json<{ message: string }>().message;
  };

  it('a host neither loopback nor allowed: 403 CARD_URL_NOT_ALLOWED, nothing fetched', async () => {
    const message = await refused(
      { card_url: 'https://cards.example.com/agent.json' },
      403,
      'CARD_URL_NOT_ALLOWED',
    );
    expect(message).toContain('REACH_CARD_HOSTS');
    await refused(
      { card_url: `http://user:pw@127.0.0.1:1/card.json` },
      403,
      'CARD_URL_NOT_ALLOWED',
    );
  });

  it('keys required, no REACH_OUTBOUND_LOOPBACK=on: every loopback card_url is refused alike, nothing fetched', async () => {
    await service.close();
    service = await startService({});
    const before = cardRequests;
    const redisPort = new URL(testServices().redisUrl).port || '6379';
    const messages = new Set<string>();
    // A card server, a closed port, Redis, and registry-sync's own port: one answer.
    for (const target of [
      `${cardBase}/card.json`,
      `${cardBase}/missing`,
      'http://127.0.0.1:1/card.json',
      `http://127.0.0.1:${redisPort}/`,
      'http://127.0.0.1:4001/healthz',
    ])
      messages.add(await refused({ card_url: target }, 403, 'CARD_URL_NOT_ALLOWED'));
    expect([...messages]).toEqual([
      'card_url host 127.0.0.1 is not in REACH_CARD_HOSTS (a loopback host needs REACH_OUTBOUND_LOOPBACK=on while API keys are required); send the card inline or ask the operator to allow the host',
    ]);
    expect(cardRequests).toBe(before);
    // An inline card is no fetch: still registered.
    expect((await register({ agent_id: 'chef', max_concurrency: 1, card })).statusCode).toBe(200);
  });

  it('a bad card: 400 INVALID_CARD naming the field', async () => {
    expect(
      await refused({ card: { name: 'x', skills: [{ id: 'a b' }] } }, 400, 'INVALID_CARD'),
    ).toMatch(/card\.skills\.0\.id/);
    await refused({ card: { skills: [{ id: 'a' }] } }, 400, 'INVALID_CARD');
    await refused({ card: { name: 'empty', skills: [] } }, 400, 'INVALID_CARD');
    await refused({ card, card_url: `${cardBase}/card.json` }, 400, 'INVALID_CARD');
    await refused({ card_url: `${cardBase}/not-json` }, 400, 'INVALID_CARD');
    // Fetched from an allowed host, the card is the agent's own: the schema's message too.
    expect(await refused({ card_url: `${cardBase}/bad-card.json` }, 400, 'INVALID_CARD')).toMatch(
      /card\.skills\.0\.id/,
    );
    // Neither capabilities nor a card.
    await refused({}, 400, 'INVALID_BODY');
    expect(await redis.exists(reachKeys(prefix).agent('bad'))).toBe(0);
  });

  it('a fetch that fails: 502 CARD_FETCH_FAILED, one message whatever failed; the log says what', async () => {
    const redisPort = new URL(testServices().redisUrl).port || '6379';
    const why: Record<string, Record<string, unknown>> = {
      [`${cardBase}/missing`]: { kind: 'status', status: 404 },
      [`${cardBase}/moved`]: { kind: 'status', status: 302 },
      [`${cardBase}/big.json`]: { kind: 'too_large' },
      [`${cardBase}/chunked`]: { kind: 'too_large' },
      [`${cardBase}/slow`]: { kind: 'timeout' },
      'http://127.0.0.1:1/card.json': { kind: 'no_connection' },
      // Not an HTTP service: it answers something, or breaks the connection.
      [`http://127.0.0.1:${redisPort}/`]: {},
    };
    const messages = new Set<string>();
    for (const [target, detail] of Object.entries(why)) {
      messages.add(await refused({ card_url: target }, 502, 'CARD_FETCH_FAILED'));
      const logged = logLines.filter((l) => String(l.msg).startsWith('card_url fetch failed'));
      expect(logged.at(-1), target).toMatchObject({
        level: 40,
        host: new URL(target).host,
        ...detail,
      });
      expect(logged.at(-1)).not.toHaveProperty('err');
    }
    expect([...messages]).toEqual([
      'could not fetch the card at card_url: it must answer 200 with the card, without a redirect, within REACH_CARD_TIMEOUT_MS and REACH_CARD_MAX_BYTES; check the URL or send the card inline (card)',
    ]);
  });
});

describe('GET /v1/agents/:id/card', () => {
  it('answers like GET /v1/agents/:id: another tenant’s agent and an unknown one are not found', async () => {
    expect((await register({ agent_id: 'chef', max_concurrency: 1, card })).statusCode).toBe(200);
    const store = new ApiKeyStore({ redis, keys: reachKeys(prefix) });
    const other = (await store.create({ tenant: 'other', role: 'caller' })).key;
    const mine = (await store.create({ tenant: 'default', role: 'caller' })).key;
    expect(
      (await get('/v1/agents/chef/card', { authorization: `Bearer ${mine}` })).statusCode,
    ).toBe(200);
    const hidden = await get('/v1/agents/chef/card', { authorization: `Bearer ${other}` });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ error: 'AGENT_NOT_FOUND' });
    expect((await get('/v1/agents/nobody/card')).json()).toMatchObject({
      error: 'AGENT_NOT_FOUND',
    });
    expect((await get('/v1/agents/chef/card', {})).statusCode).toBe(401);
  });
});
