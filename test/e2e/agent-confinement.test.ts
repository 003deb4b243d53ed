/**
 * Agents with auth on (REACH_AUTH=required) and confined in Redis (REACH_AGENT_ACL=on), real
 * services and real keys: an agent of tenant A cannot register as tenant B's agent (the running
 * one untouched); SDK agents connect as the Redis users their registration issued; with those
 * credentials an agent cannot read another agent's inbox, run a script, or complete another
 * agent's task (the forged ack is refused and counted, and the task ends with the real result);
 * an agent whose Redis user was lost gets new credentials with a heartbeat and works on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Redis } from 'ioredis';
import { encodeAck, withAckSignature, type RegisterReply } from '@agent-reach/protocol';
import { ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-confinement-test-0123456789';
let stack: Stack;
let admin: Redis;
const agents: ReachAgent[] = [];
const opened: Redis[] = [];
const key: Record<string, string> = {};
let release: () => void = () => undefined;
const held = new Promise<void>((resolve) => {
  release = resolve;
});

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

async function startAgent(
  agentId: string,
  capabilities: string[],
  apiKey: string,
  handler: (task: TaskContext) => Promise<unknown>,
): Promise<RegisterReply> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities,
    apiKey,
    handler,
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  return agent.ready();
}

async function connectAs(creds: { username: string; password: string }): Promise<Redis> {
  const conn = new Redis(stack.redisUrl, {
    ...creds,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
  });
  conn.on('error', () => undefined);
  opened.push(conn);
  return conn;
}

async function errorCode(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'OK';
  } catch (err: unknown) {
    return /^([A-Z]+)/.exec((err as Error).message)?.[1] ?? 'ERROR';
  }
}

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN, REACH_AGENT_ACL: 'on' },
  });
  admin = new Redis(stack.redisUrl);
  key['acme-agent'] = await makeKey({ tenant: 'acme', role: 'agent', label: 'acme agents' });
  key['globex-agent'] = await makeKey({ tenant: 'globex', role: 'agent', label: 'globex agents' });
  key['acme-caller'] = await makeKey({ tenant: 'acme', role: 'caller' });
}, 60_000);

afterAll(async () => {
  release();
  await Promise.all(agents.map((a) => a.close()));
  await Promise.all(opened.map((r) => r.quit().catch(() => r.disconnect())));
  await stack?.stop();
  const users = (await admin.acl('USERS')).filter((u) => u.startsWith(`${stack.prefix}|`));
  if (users.length > 0) await admin.acl('DELUSER', ...users);
  await admin?.quit();
});

describe('agents confined by keys and Redis users', () => {
  let victim: RegisterReply;
  let thief: RegisterReply;

  it('an agent of tenant A is unable to register as tenant B’s agent', async () => {
    victim = await startAgent('victim', ['slow'], key['acme-agent']!, async (task) => {
      await held;
      return { by: 'victim', payload: task.payload };
    });
    expect(victim).toMatchObject({ tenant: 'acme', shared: false });
    const takeover = await http(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'victim',
        instance_id: 'impostor',
        capabilities: ['slow'],
        max_concurrency: 1,
      },
      headers: { authorization: `Bearer ${key['globex-agent']}` },
    });
    expect(takeover.status).toBe(403);
    expect(takeover.body).toMatchObject({ error: 'FORBIDDEN' });
    // Still the same instance and epoch: nothing was fenced.
    const view = await http<{ instance_id: string; epoch: number; tenant: string }>(
      `${stack.registryUrl}/v1/agents/victim`,
      { headers: { authorization: `Bearer ${ADMIN}` } },
    );
    expect(view.body).toMatchObject({
      instance_id: victim.instance_id,
      epoch: victim.epoch,
      tenant: 'acme',
    });
  });

  it('SDK agents read and report as the Redis users their registration issued', async () => {
    thief = await startAgent('thief', ['other'], key['acme-agent']!, async () => 'ok');
    expect(thief.redis?.username).toBe(`${stack.prefix}|agent|thief|${thief.instance_id}`);
    await waitFor(
      async () => {
        const list = (await admin.client('LIST')) as string;
        return list
          .split('\n')
          .filter((line) => line.includes('name=reach:victim:'))
          .some((line) => line.includes(`user=${victim.redis!.username}`));
      },
      { message: 'the victim agent connected as its own user' },
    );
  });

  it('with an agent’s own credentials: no other inbox, no script, no forged completion', async () => {
    const keys = stack.keys;
    const submitted = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'job-1', capability: 'slow', payload: { n: 1 } },
      headers: { authorization: `Bearer ${key['acme-caller']}` },
    });
    expect(submitted.status).toBe(202);
    const task = () =>
      http<{ status: string; result?: unknown; agent_id?: string }>(
        `${stack.routerUrl}/v1/tasks/job-1`,
        { headers: { authorization: `Bearer ${key['acme-caller']}` } },
      );
    await waitFor(async () => (await task()).body.status === 'received', {
      message: 'victim received the task',
    });
    const me = await connectAs(thief.redis!);
    expect(
      await errorCode(() =>
        me.xreadgroup('GROUP', 'workers', 'x', 'COUNT', 1, 'STREAMS', victim.stream, '0'),
      ),
    ).toBe('NOPERM');
    expect(await errorCode(() => me.eval("return redis.call('PING')", 0))).toBe('NOPERM');
    const before = Number((await admin.hget(keys.stats(), 'acks_refused:bad_signature')) ?? 0);
    const forged = encodeAck({
      task_id: 'acme/job-1',
      stage: 'completed',
      agent_id: 'victim',
      instance_id: victim.instance_id,
      epoch: victim.epoch,
      attempt: 1,
      result: '"forged"',
    });
    // Written where the thief may write; signed with its own key (it has no other).
    expect(
      await errorCode(() =>
        me.xadd(thief.acks_stream, '*', ...withAckSignature(forged, thief.ack_key!)),
      ),
    ).toBe('OK');
    await waitFor(
      async () =>
        Number((await admin.hget(keys.stats(), 'acks_refused:bad_signature')) ?? 0) === before + 1,
      { message: 'the forged completion refused and counted' },
    );
    expect((await task()).body.status).toBe('received');
    release();
    await waitFor(async () => (await task()).body.status === 'completed', {
      message: 'the real completion',
    });
    expect((await task()).body).toMatchObject({
      status: 'completed',
      agent_id: 'victim',
      result: { by: 'victim', payload: { n: 1 } },
    });
  });

  it('an SDK agent whose Redis user was lost gets new credentials with a heartbeat and works on', async () => {
    // As after a Redis restart that kept the data but not the users: Redis drops its connections.
    await admin.acl('DELUSER', thief.redis!.username);
    await waitFor(async () => (await admin.acl('GETUSER', thief.redis!.username)) !== null, {
      message: 'the user made again by a heartbeat',
    });
    const submitted = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'job-2', capability: 'other', payload: 2 },
      headers: { authorization: `Bearer ${key['acme-caller']}` },
    });
    expect(submitted.status).toBe(202);
    await waitFor(
      async () =>
        (
          await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/job-2`, {
            headers: { authorization: `Bearer ${key['acme-caller']}` },
          })
        ).body.status === 'completed',
      { message: 'the task completed by the agent on its new credentials' },
    );
  });
});
