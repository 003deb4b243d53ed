/**
 * The edges of a stack, with both services as processes on a real Redis:
 *
 * - DNS rebinding: a keyless stack (auth off on loopback, as `npm start` runs) answers a request
 *   only for a loopback `Host` and, when sent, a loopback `Origin`. The request a page on a
 *   rebinding host name sends (`Host` and `Origin` of evil.example.com) is refused by the router,
 *   by registry-sync and by `/mcp`, as the MCP conformance suite's `dns-rebinding-protection`
 *   scenario sends it; the same request with loopback names is served. A relay on loopback,
 *   whose routes (health, metrics) are all public, answers loopback names only too.
 * - Key guessing: with keys required and the router behind nginx (trusted for X-Forwarded-For, as
 *   `npm start -- --cluster` runs it), 1,000 made-up keys from one client address get 401 up to
 *   the limit, then 429 AUTH_FAILURES with Retry-After, at a bounded number of Redis commands;
 *   meanwhile a valid key from another address behind the same nginx is served. Wrong agent
 *   tokens count at registry-sync the same way, and an address's count is shared by both services.
 */
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { newApiKey } from '@agent-reach/service-kit';
import {
  findBinary,
  freePort,
  startLoadBalancer,
  type ManagedProcess,
} from '@agent-reach/process-kit';
import { startRelay } from '../support/endpoints.ts';
import { startStack, type Stack } from '../support/stack.ts';

interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP request with the headers a browser page would send, from `localAddress`. */
function send(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    localAddress?: string;
  } = {},
): Promise<Reply> {
  const target = new URL(url);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: opts.method ?? (body ? 'POST' : 'GET'),
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(opts.headers ?? {}),
        },
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: Record<string, unknown>;
          try {
            parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            parsed = { text };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The MCP `initialize` the conformance scenario sends, with `host` as Host and Origin. */
const initialize = (url: string, host: string) =>
  send(`${url}/mcp`, {
    headers: {
      host,
      origin: `http://${host}`,
      accept: 'application/json, text/event-stream',
    },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'dns-rebinding-check', version: '1.0.0' },
      },
    },
  });

const EVIL = 'evil.example.com';

describe('a keyless stack answers loopback names only', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('refuses the rebinding requests of a page on another host name, at every service', async () => {
    const rebound = { host: EVIL, origin: `http://${EVIL}` };
    const submit = await send(`${stack.routerUrl}/v1/tasks`, {
      headers: rebound,
      body: { capability: 'echo', payload: 1, on_no_agent: 'queue' },
    });
    expect(submit.status).toBe(403);
    expect(submit.body.error).toBe('HOST_NOT_ALLOWED');
    const agents = await send(`${stack.registryUrl}/v1/agents`, { headers: rebound });
    expect(agents.status).toBe(403);
    expect(agents.body.error).toBe('HOST_NOT_ALLOWED');
    const mcp = await initialize(stack.routerUrl, EVIL);
    expect(mcp.status).toBe(403);

    // A loopback host with a foreign origin: a cross-site call from a page elsewhere.
    const crossSite = await send(`${stack.routerUrl}/v1/tasks`, {
      headers: { origin: `http://${EVIL}` },
      body: { capability: 'echo', payload: 1, on_no_agent: 'queue' },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error).toBe('ORIGIN_NOT_ALLOWED');
    const crossSiteAgents = await send(`${stack.registryUrl}/v1/agents`, {
      headers: { origin: `http://${EVIL}` },
    });
    expect(crossSiteAgents.body.error).toBe('ORIGIN_NOT_ALLOWED');
  });

  it('has the relay, whose routes are all public, answer loopback names only', async () => {
    const relay = await startRelay(stack);
    try {
      const rebound = await send(`${relay.url}/healthz`, {
        headers: { host: EVIL, origin: `http://${EVIL}` },
      });
      expect(rebound.status).toBe(403);
      expect(rebound.body.error).toBe('HOST_NOT_ALLOWED');
      const metrics = await send(`${relay.url}/metrics`, { headers: { host: EVIL } });
      expect(metrics.status).toBe(403);
      const local = await send(`${relay.url}/healthz`);
      expect(local.status).toBe(200);
    } finally {
      await relay.proc.stop();
    }
  });

  it('serves the same requests sent with loopback names', async () => {
    const routerHost = new URL(stack.routerUrl).host;
    const registryHost = new URL(stack.registryUrl).host;
    const mcp = await initialize(stack.routerUrl, routerHost);
    expect(mcp.status).toBe(200);
    const submit = await send(`${stack.routerUrl}/v1/tasks`, {
      headers: {
        host: `localhost:${new URL(stack.routerUrl).port}`,
        origin: `http://${routerHost}`,
      },
      body: { capability: 'echo', payload: 1, on_no_agent: 'queue', timeout_s: 5 },
    });
    expect(submit.status).toBe(202);
    const agents = await send(`${stack.registryUrl}/v1/agents`, {
      headers: { origin: `http://${registryHost}` },
    });
    expect(agents.status).toBe(200);
  });
});

/**
 * Counts the commands Redis runs on keys of the stack's prefix: MONITOR, read from a plain
 * socket (one `+<time> [db addr] "cmd" "arg"…` line per command).
 */
async function commandCounter(
  stack: Stack,
): Promise<{ count(): number; guessed(): number; limiter(): number; stop(): Promise<void> }> {
  // The standalone leg's Redis: the limiter's counter is one key, whatever the topology.
  const url = new URL(stack.redisUrl);
  const targets = [{ host: url.hostname, port: Number(url.port || 6379) }];
  let count = 0;
  let guessed = 0;
  let limiter = 0;
  const sockets = await Promise.all(
    targets.map(
      (t) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(t, () => {
            socket.write('MONITOR\r\n');
          });
          let rest = '';
          let started = false;
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => {
            const lines = (rest + chunk).split('\r\n');
            rest = lines.pop() ?? '';
            for (const line of lines) {
              if (!started) {
                started = line === '+OK';
                if (started) resolve(socket);
                continue;
              }
              if (!line.includes(stack.prefix)) continue;
              count++;
              const onLimiter = line.includes(`${stack.prefix}:authfail:`);
              if (onLimiter) limiter++;
              if (onLimiter || line.includes(`${stack.prefix}:key:`)) guessed++;
            }
          });
          socket.once('error', reject);
        }),
    ),
  );
  return {
    count: () => count,
    guessed: () => guessed,
    limiter: () => limiter,
    async stop() {
      for (const socket of sockets) socket.destroy();
    },
  };
}

const nginxBin = findBinary('nginx');
const ADMIN = `admin-edge-${'k'.repeat(40)}`;
const LIMIT = 10;
const GUESSES = 1000;

describe.skipIf(!nginxBin)('key guessing behind nginx, keys required', () => {
  let stack: Stack;
  let nginx: ManagedProcess | undefined;
  let dir = '';
  let front = '';

  beforeAll(async () => {
    stack = await startStack({
      env: {
        REACH_AUTH: 'required',
        REACH_ADMIN_KEY: ADMIN,
        REACH_TRUSTED_PROXIES: '127.0.0.1',
        REACH_AUTH_FAILURE_LIMIT: String(LIMIT),
        REACH_AUTH_FAILURE_WINDOW_S: '60',
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'reach-edge-nginx-'));
    const port = await freePort();
    nginx = await startLoadBalancer({
      bin: nginxBin as string,
      dir,
      fronts: [{ name: 'routers', port, upstreamPorts: [Number(new URL(stack.routerUrl).port)] }],
    });
    front = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await nginx?.stop('SIGTERM', 5000);
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`answers ${GUESSES} made-up keys 401 then 429 at a bounded cost, and still serves a valid key from another address`, async () => {
    const counter = await commandCounter(stack);
    const statuses = new Map<number, number>();
    let retryAfter: string | string[] | undefined;
    try {
      for (let i = 0; i < GUESSES; i++) {
        const res = await send(`${front}/v1/dlq`, {
          headers: { authorization: `Bearer ${newApiKey().key}` },
          localAddress: '127.0.0.2',
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 429) {
          expect(res.body.error).toBe('AUTH_FAILURES');
          retryAfter = res.headers['retry-after'];
        }
      }
    } finally {
      await counter.stop();
    }
    expect(statuses.get(401)).toBe(LIMIT);
    expect(statuses.get(429)).toBe(GUESSES - LIMIT);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Each counted guess costs a key read and a MULTI (INCR, PEXPIRE, PTTL, with MULTI and EXEC):
    // about 6 commands for each of the first LIMIT, then none. Only the API keys' and the
    // limiter's keys count: the services' own background (heartbeats, sweeps) grows with the
    // time the guesses take, which a busy machine stretches.
    const commands = counter.guessed();
    console.log(
      `key guessing: ${GUESSES} made-up keys cost Redis ${commands} commands on key and limiter keys, ${counter.count()} on the stack's keys in all (limit ${LIMIT})`,
    );
    expect(commands).toBeLessThan(LIMIT * 6);

    // Another address behind the same nginx is not limited: a valid key is served, and a valid
    // request never reaches the limiter's counters.
    const valids = await commandCounter(stack);
    try {
      for (let i = 0; i < 50; i++) {
        const valid = await send(`${front}/v1/dlq`, {
          headers: { authorization: `Bearer ${ADMIN}` },
          localAddress: '127.0.0.3',
        });
        expect(valid.status).toBe(200);
      }
    } finally {
      await valids.stop();
    }
    expect(valids.limiter()).toBe(0);
    // The limited address is refused even with a valid key, until its window ends.
    const limited = await send(`${front}/v1/dlq`, {
      headers: { authorization: `Bearer ${ADMIN}` },
      localAddress: '127.0.0.2',
    });
    expect(limited.status).toBe(429);
  });

  it('counts wrong agent tokens at registry-sync, and shares each address count with the router', async () => {
    const registered = await send(`${stack.registryUrl}/v1/agents/register`, {
      headers: { authorization: `Bearer ${ADMIN}` },
      body: {
        agent_id: 'edge-agent',
        instance_id: 'i1',
        capabilities: ['edge'],
        max_concurrency: 1,
      },
      localAddress: '127.0.0.6',
    });
    expect(registered.status).toBe(200);
    const token = String(registered.body.token);
    const beat = (bearer: string, localAddress: string) =>
      send(`${stack.registryUrl}/v1/agents/edge-agent/heartbeat`, {
        headers: { authorization: `Bearer ${bearer}` },
        body: { inflight: 0 },
        localAddress,
      });
    const wrong = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 3; i++) statuses.push((await beat(wrong, '127.0.0.6')).status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429, 429, 429]);
    // The agent's own token from another address still beats.
    expect((await beat(token, '127.0.0.7')).status).toBe(200);
    // The address the router limited (through nginx) is limited at registry-sync too: its first
    // failure there finds the shared count over the limit.
    const guess = () =>
      send(`${stack.registryUrl}/v1/agents`, {
        headers: { authorization: `Bearer ${newApiKey().key}` },
        localAddress: '127.0.0.2',
      });
    expect((await guess()).status).toBe(401);
    expect((await guess()).status).toBe(429);
  });

  it('refuses a rebinding host name only where a list of hosts is set: keys guard the rest', async () => {
    const res = await send(`${stack.routerUrl}/v1/dlq`, {
      headers: { host: EVIL, authorization: `Bearer ${ADMIN}` },
      localAddress: '127.0.0.4',
    });
    expect(res.status).toBe(200);
    const crossSite = await send(`${stack.routerUrl}/v1/dlq`, {
      headers: { origin: `http://${EVIL}`, authorization: `Bearer ${ADMIN}` },
      localAddress: '127.0.0.4',
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error).toBe('ORIGIN_NOT_ALLOWED');
  });
});
