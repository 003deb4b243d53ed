/**
 * A relay's own Redis user (REACH_AGENT_ACL=on on registry-sync, REACH_RELAY_REDIS_ACL=on on the
 * relay, docs/ENDPOINTS.md, Identity): the relay serves its endpoint agents with a user that
 * reaches their inboxes and control streams, the declarations and the acks streams (write-only),
 * and is refused everything else — a task's state, another agent's inbox, a write to an inbox.
 * An endpoint declared later becomes reachable without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { WORKER_GROUP } from '@agent-reach/protocol';
import { startHttpServer } from '@agent-reach/relay/demo';
import { waitFor } from '@agent-reach/testkit';
import { agentStatus, declareEndpoint, startRelay } from '../support/endpoints.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let endpointUrl: string;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_AGENT_ACL: 'on' } });
  const server = await startHttpServer();
  stops.push(() => server.close());
  endpointUrl = server.url;
  await declareEndpoint(stack, 'acl-echo', {
    protocol: 'http',
    url: `${endpointUrl}/echo`,
    capabilities: ['acl.echo'],
  });
  const relay = await startRelay(stack, { REACH_RELAY_REDIS_ACL: 'on' });
  stops.push(() => relay.proc.stop());
}, 180_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

const run = (capability: string) =>
  http<{ status: string; result?: unknown }>(`${stack.routerUrl}/v1/tasks?wait_ms=10000`, {
    body: { capability, payload: { n: 1 } },
  });

/** The Redis error of a command, or 'OK' when it was allowed. */
async function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'OK',
    (err: unknown) => (err instanceof Error ? (err.message.split(' ')[0] ?? '') : String(err)),
  );
}

describe('a relay with a Redis user of its own', () => {
  it('serves its endpoint agents, acks signed', async () => {
    await waitFor(async () => (await agentStatus(stack, 'acl-echo')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    const res = await run('acl.echo');
    expect(res.body.status).toBe('completed');
    expect(res.body.result).toMatchObject({ echo: { n: 1 } });
  });

  it('is refused every key but its agents’, the declarations, the membership and the acks', async () => {
    const creds = await http<{ username: string; password: string }>(
      `${stack.registryUrl}/v1/relays/acl-check/redis`,
      { method: 'POST' },
    );
    expect(creds.status).toBe(200);
    expect(creds.body.username).toBe(`${stack.prefix}|relay|acl-check`);
    const keys = stack.keys;
    const as = new Redis(stack.redisUrl, {
      username: creds.body.username,
      password: creds.body.password,
      enableReadyCheck: false,
      lazyConnect: true,
    });
    await as.connect();
    try {
      const read = (stream: string) =>
        as.xreadgroup('GROUP', WORKER_GROUP, 'acl-check', 'COUNT', 1, 'STREAMS', stream, '0');
      expect(await outcome(read(keys.inbox('acl-echo')))).toBe('OK');
      expect(await outcome(as.hgetall(keys.endpointSecrets()))).toBe('OK');
      expect(await outcome(as.xadd(keys.acks(), '*', 'probe', '1'))).toBe('OK');
      expect(await outcome(read(keys.inbox('some-sdk-agent')))).toBe('NOPERM');
      expect(await outcome(as.xadd(keys.inbox('acl-echo'), '*', 'task_id', 'forged'))).toBe(
        'NOPERM',
      );
      expect(await outcome(as.xrange(keys.acks(), '-', '+'))).toBe('NOPERM');
      expect(await outcome(as.hgetall(keys.task('any')))).toBe('NOPERM');
      expect(await outcome(as.get(keys.snapshot()))).toBe('NOPERM');
      expect(await outcome(as.hset(keys.endpoints(), 'x', '{}'))).toBe('NOPERM');
    } finally {
      as.disconnect();
    }
  });

  it('reaches an endpoint declared later without a restart', async () => {
    await declareEndpoint(stack, 'acl-echo-2', {
      protocol: 'http',
      url: `${endpointUrl}/echo2`,
      capabilities: ['acl.echo2'],
    });
    await waitFor(async () => (await agentStatus(stack, 'acl-echo-2')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    const res = await run('acl.echo2');
    expect(res.body.status).toBe('completed');
  });
});
