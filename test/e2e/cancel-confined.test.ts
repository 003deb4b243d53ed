/**
 * Cancellation reaches an agent confined to its own Redis user (REACH_AGENT_ACL=on): the user may
 * XREAD its own control stream and no other agent's, and a cancel aborts its running handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { ReachAgent, type RegisterReply, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-cancel-acl-test-0123456789';
let stack: Stack;
let admin: Redis;
const agents: ReachAgent[] = [];
const opened: Redis[] = [];
const key: Record<string, string> = {};
const aborted = new Map<string, string>();

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

async function startAgent(agentId: string): Promise<RegisterReply> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities: ['hang'],
    apiKey: key.agent,
    handler: (t: TaskContext) =>
      new Promise((_, reject) => {
        t.signal.addEventListener('abort', () => {
          aborted.set(t.taskId, String((t.signal.reason as { reason?: string }).reason));
          reject(t.signal.reason as Error);
        });
      }),
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  return agent.ready();
}

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN, REACH_AGENT_ACL: 'on' },
  });
  admin = new Redis(stack.redisUrl);
  key.agent = await makeKey({ tenant: 'acme', role: 'agent' });
  key.caller = await makeKey({ tenant: 'acme', role: 'caller' });
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await Promise.all(opened.map((r) => r.quit().catch(() => r.disconnect())));
  await stack?.stop();
  const users = (await admin.acl('USERS')).filter((u) => u.startsWith(`${stack.prefix}|`));
  if (users.length > 0) await admin.acl('DELUSER', ...users);
  await admin?.quit();
});

describe('cancelling a confined agent’s task', () => {
  it('reads its own control stream only, and its handler is aborted by a cancel', async () => {
    const one = await startAgent('confined-1');
    const two = await startAgent('confined-2');
    expect(one.control_stream).toBeDefined();
    const conn = new Redis(stack.redisUrl, {
      ...one.redis!,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    conn.on('error', () => undefined);
    opened.push(conn);
    await conn.xread('COUNT', 1, 'STREAMS', one.control_stream!, '0-0');
    await expect(conn.xread('COUNT', 1, 'STREAMS', two.control_stream!, '0-0')).rejects.toThrow(
      /NOPERM/,
    );

    const auth = { authorization: `Bearer ${key.caller}` };
    const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'hang', payload: 1 },
      headers: auth,
    });
    expect(sub.status).toBe(202);
    await waitFor(
      async () =>
        (
          await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}`, {
            headers: auth,
          })
        ).body.status === 'received',
    );
    const t0 = Date.now();
    const res = await http(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}/cancel`, {
      method: 'POST',
      body: {},
      headers: auth,
    });
    expect(res.status).toBe(202);
    // The agent's handler sees the scoped id of its tenant's task.
    const reason = await waitFor(() => aborted.get(`acme/${sub.body.task_id}`), {
      timeoutMs: 5000,
      message: 'the confined agent’s handler was not aborted',
    });
    expect(reason).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
