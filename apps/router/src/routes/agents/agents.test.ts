/**
 * The router's drain and serve routes send the call on to registry-sync with the caller's key
 * and pass its answer back; without REACH_REGISTRY_URL, or with a registry-sync that does not
 * answer, they say so with a stable code. A fake registry-sync (a loopback HTTP server) stands in.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import {
  baseFastifyOptions,
  installAuth,
  installErrorHandling,
  type Principal,
} from '@agent-reach/service-kit';
import { RegistryForwarder } from '../../agents/registry-forwarder.ts';
import { agentsRoutes } from './index.ts';

const OPERATOR: Principal = {
  keyId: 'op',
  tenant: 'default',
  role: 'operator',
  capabilities: ['*'],
  open: false,
};
const CALLER: Principal = { ...OPERATOR, keyId: 'c', role: 'caller', tenant: 'acme' };

/** What the fake registry-sync was sent, and what it answers next. */
const seen: { url?: string; headers?: IncomingHttpHeaders; body?: string }[] = [];
let answer: { status: number; body: string } = { status: 200, body: '{}' };
let fake: Server;
let fakeUrl: string;

beforeAll(async () => {
  fake = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ url: req.url, headers: req.headers, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => fake.close(resolve));
});

async function routerApp(url: string | undefined, timeoutMs?: number) {
  const app = Fastify(baseFastifyOptions(1 << 20));
  installErrorHandling(app, () => false);
  await app.register(cookie);
  installAuth(app, {
    required: true,
    verifier: {
      verify: async (k) => (k === 'op-key' ? OPERATOR : k === 'caller-key' ? CALLER : undefined),
    },
  });
  await app.register(agentsRoutes, {
    registry: new RegistryForwarder({ url, ...(timeoutMs ? { timeoutMs } : {}) }),
  });
  return app;
}

const asOperator = { authorization: 'Bearer op-key' };

describe('drain and serve through the router', () => {
  it('answer 503 REGISTRY_NOT_CONFIGURED without REACH_REGISTRY_URL', async () => {
    const app = await routerApp(undefined);
    for (const path of ['drain', 'serve']) {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/agents/a1/${path}`,
        headers: asOperator,
      });
      expect(res.statusCode, path).toBe(503);
      expect(res.json()).toMatchObject({ error: 'REGISTRY_NOT_CONFIGURED' });
    }
    await app.close();
  });

  it('send the call on with the key and pass back registry-sync’s status and body', async () => {
    const app = await routerApp(`${fakeUrl}/`);
    answer = {
      status: 404,
      body: JSON.stringify({ error: 'AGENT_NOT_FOUND', message: 'agent ghost is not registered' }),
    };
    const missing = await app.inject({
      method: 'POST',
      url: '/v1/agents/ghost/drain',
      headers: asOperator,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual(JSON.parse(answer.body));
    expect(seen.at(-1)).toMatchObject({ url: '/v1/agents/ghost/drain', body: '' });
    expect(seen.at(-1)?.headers?.authorization).toBe('Bearer op-key');

    // The console's session cookie, with its write header, is sent on as the bearer.
    const view = {
      agent_id: 'a1',
      tenant: 'default',
      shared: false,
      status: 'HEALTHY',
      capabilities: ['echo'],
      max_concurrency: 2,
      inflight: 0,
      reported_inflight: 0,
      region: '',
      channel: 'push',
      registered_at: 1,
      last_heartbeat_at: 1,
      lease_age_ms: 0,
      ejected_until: 0,
      health_score: 100,
      degraded_until: 0,
      tags: [],
      observe: false,
      priority: 0,
      weight: 2,
      ewma_ms: {},
      meta: {},
    };
    answer = { status: 200, body: JSON.stringify(view) };
    const promoted = await app.inject({
      method: 'POST',
      url: '/v1/agents/a1/serve',
      headers: { 'x-reach-console': '1', cookie: 'reach_key=op-key' },
      payload: { weight: 2 },
    });
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json()).toEqual(view);
    expect(seen.at(-1)?.headers?.authorization).toBe('Bearer op-key');
    expect(JSON.parse(seen.at(-1)?.body ?? '')).toEqual({ weight: 2 });
    await app.close();
  });

  it('refuse a caller key before registry-sync is asked', async () => {
    const app = await routerApp(fakeUrl);
    const before = seen.length;
    const res = await app.inject({
      method: 'POST',
      url: '/v1/agents/a1/drain',
      headers: { authorization: 'Bearer caller-key' },
    });
    expect(res.statusCode).toBe(403);
    expect(seen.length).toBe(before);
    await app.close();
  });

  it('answer 502 REGISTRY_UNAVAILABLE when registry-sync is down or not the API', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await routerApp(`http://127.0.0.1:${port}`);
    const res = await down.inject({
      method: 'POST',
      url: '/v1/agents/a1/drain',
      headers: asOperator,
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ error: 'REGISTRY_UNAVAILABLE' });
    await down.close();

    const app = await routerApp(fakeUrl);
    answer = { status: 502, body: '<html>Bad Gateway</html>' };
    const proxied = await app.inject({
      method: 'POST',
      url: '/v1/agents/a1/drain',
      headers: asOperator,
    });
    expect(proxied.statusCode).toBe(502);
    expect(proxied.json()).toMatchObject({ error: 'REGISTRY_UNAVAILABLE' });
    await app.close();
  });
});
