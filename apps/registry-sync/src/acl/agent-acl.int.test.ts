import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  encodeAck,
  reachKeys,
  withAckSignature,
  type AgentAck,
  type RegisterReply,
} from '@agent-reach/protocol';
import { randomPrefix, startOwnRedis, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { AgentAcl } from './agent-acl.ts';

let service: RegistryService;
let admin: Redis;
let prefix: string;
const opened: Redis[] = [];

const fast = {
  heartbeatIntervalMs: 100,
  suspectMs: 400,
  offlineMs: 800,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 200,
  probeIntervalMs: 60_000,
};

beforeEach(async () => {
  prefix = randomPrefix();
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, agentAcl: true, ...fast },
    { logger: pino({ level: 'silent' }) },
  );
  admin = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.quit().catch(() => r.disconnect())));
  await service.close();
  const users = (await admin.acl('USERS')).filter((u) => u.startsWith(`${prefix}|`));
  if (users.length > 0) await admin.acl('DELUSER', ...users);
  const keys = await admin.keys(`${prefix}:*`);
  if (keys.length > 0) await admin.del(...keys);
  await admin.quit();
});

async function register(
  body: Record<string, unknown>,
  on: RegistryService = service,
): Promise<RegisterReply> {
  const res = await on.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: body,
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

async function heartbeat(reply: RegisterReply): Promise<AgentAck> {
  const res = await service.app.inject({
    method: 'POST',
    url: `/v1/agents/${reply.agent_id}/heartbeat`,
    headers: { authorization: `Bearer ${reply.token}` },
    payload: { inflight: 0 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<AgentAck>();
}

/** A connection as the agent's own Redis user, from its register (or heartbeat) reply. */
async function connectAs(
  creds: { username: string; password: string },
  url = testServices().redisUrl,
): Promise<Redis> {
  const conn = new Redis(url, {
    username: creds.username,
    password: creds.password,
    enableReadyCheck: false,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  conn.on('error', () => undefined);
  opened.push(conn);
  await conn.connect();
  return conn;
}

/** The Redis error code a command fails with, or 'OK'. */
async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'OK';
  } catch (err: unknown) {
    return /^([A-Z]+)/.exec((err as Error).message)?.[1] ?? (err as Error).message;
  }
}

describe('an agent instance confined to its own Redis user (REACH_AGENT_ACL=on)', () => {
  it('reads only its inbox and pools, appends only to its acks, and runs no script', async () => {
    const keys = reachKeys(prefix);
    const a1 = await register({
      agent_id: 'a1',
      capabilities: ['echo'],
      max_concurrency: 2,
      channel: 'pull',
    });
    const a2 = await register({ agent_id: 'a2', capabilities: ['other'], max_concurrency: 2 });
    expect(a1.redis?.username).toBe(`${prefix}|agent|a1|${a1.instance_id}`);
    expect(a1.ack_key).toMatch(/^[0-9a-f]{64}$/);
    expect(a1.tenant).toBe('default');
    await admin.xgroup('CREATE', keys.pool('other'), 'workers', '0', 'MKSTREAM');
    const me = await connectAs(a1.redis!);
    const read = (stream: string) =>
      outcome(() => me.xreadgroup('GROUP', 'workers', 'c', 'COUNT', 1, 'STREAMS', stream, '>'));
    expect(await read(a1.stream)).toBe('OK');
    expect(await read(keys.pool('echo'))).toBe('OK');
    expect(await me.ping()).toBe('PONG');
    expect(await outcome(() => me.xadd(a1.acks_stream, '*', 'a', 'b'))).toBe('OK');
    // Another agent's inbox, a capability it does not serve, scripts, reading acks, writing tasks.
    expect(await read(a2.stream)).toBe('NOPERM');
    expect(await read(keys.pool('other'))).toBe('NOPERM');
    expect(await outcome(() => me.eval('return 1', 0))).toBe('NOPERM');
    expect(await outcome(() => me.xrange(a1.acks_stream, '-', '+'))).toBe('NOPERM');
    expect(await outcome(() => me.xadd(a2.stream, '*', 'task_id', 't'))).toBe('NOPERM');
    expect(await outcome(() => me.xadd(a1.stream, '*', 'task_id', 't'))).toBe('NOPERM');
    expect(await outcome(() => me.hgetall(keys.agent('a2')))).toBe('NOPERM');
    expect(await outcome(() => me.del(a1.acks_stream))).toBe('NOPERM');
    expect(await outcome(() => me.keys('*'))).toBe('NOPERM');
    expect(await outcome(() => me.acl('LIST'))).toBe('NOPERM');
    expect(await outcome(() => me.config('GET', 'dir'))).toBe('NOPERM');
  });

  it('refuses and counts a forged ack for another agent’s task and leaves the task as it was', async () => {
    const keys = reachKeys(prefix);
    const victim = await register({
      agent_id: 'victim',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    const thief = await register({ agent_id: 'thief', capabilities: ['echo'], max_concurrency: 1 });
    // Task t1 was sent to the victim just now and is in flight there.
    await admin.hset(keys.task('t1'), {
      status: 'sent',
      attempt: 1,
      capability: 'echo',
      agent_id: 'victim',
      epoch: victim.epoch,
    });
    await admin.hset(keys.pending('victim'), 't1', `1|${victim.epoch}||${Date.now()}-0|0|0`);
    const me = await connectAs(thief.redis!);
    const forged = encodeAck({
      task_id: 't1',
      stage: 'completed',
      agent_id: 'victim',
      instance_id: victim.instance_id,
      epoch: victim.epoch,
      attempt: 1,
      result: '"forged"',
    });
    // Unsigned, and signed with the thief's own key: both refused.
    await me.xadd(thief.acks_stream, '*', ...forged);
    await me.xadd(thief.acks_stream, '*', ...withAckSignature(forged, thief.ack_key!));
    await waitFor(
      async () => (await admin.hget(keys.stats(), 'acks_refused:bad_signature')) === '2',
      { message: 'two forged acks refused' },
    );
    expect(await admin.hgetall(keys.task('t1'))).toMatchObject({ status: 'sent' });
    expect(await admin.hget(keys.task('t1'), 'result')).toBeNull();
    expect(await admin.hexists(keys.pending('victim'), 't1')).toBe(1);
    // The victim's own signed ack goes through.
    const mine = await connectAs(victim.redis!);
    await mine.xadd(
      victim.acks_stream,
      '*',
      ...withAckSignature(
        encodeAck({ ...decodeFields(forged), result: '"real"' }),
        victim.ack_key!,
      ),
    );
    await waitFor(async () => (await admin.hget(keys.task('t1'), 'status')) === 'completed', {
      message: 'the real completion applied',
    });
    expect(await admin.hget(keys.task('t1'), 'result')).toBe('"real"');
  });

  it('removes the user on deregister and when a new instance fences the old one', async () => {
    const first = await register({
      agent_id: 'a1',
      instance_id: 'i1',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    const conn = await connectAs(first.redis!);
    const second = await register({
      agent_id: 'a1',
      instance_id: 'i2',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    expect(await admin.acl('GETUSER', first.redis!.username)).toBeNull();
    // Redis closed the fenced instance's connection.
    await waitFor(async () => (await outcome(() => conn.ping())) !== 'PONG', {
      message: 'fenced connection closed',
    });
    expect(await admin.acl('GETUSER', second.redis!.username)).not.toBeNull();
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/a1/deregister',
      headers: { authorization: `Bearer ${second.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(await admin.acl('GETUSER', second.redis!.username)).toBeNull();
  });

  it('keeps the user of an agent an operator drains until its record is gone', async () => {
    const reply = await register({ agent_id: 'a4', capabilities: ['echo'], max_concurrency: 1 });
    const username = reply.redis!.username;
    // Something delivered to it is unfinished: draining, it stays until that is done.
    const pending = reachKeys(prefix).pending('a4');
    await admin.hset(pending, 'held-task', '0');
    const drain = await service.app.inject({ method: 'POST', url: '/v1/agents/a4/drain' });
    expect(drain.statusCode, drain.body).toBe(200);
    // Past the sweeps of a second and a half: the user is there, and the agent can still ack.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await admin.hget(reachKeys(prefix).agent('a4'), 'status')).toBe('DRAINING');
    expect(await admin.acl('GETUSER', username)).not.toBeNull();
    const conn = await connectAs(reply.redis!);
    expect(await outcome(() => conn.xadd(reply.acks_stream, '*', 'a', 'b'))).toBe('OK');
    // Done: the record is removed, and its user with it.
    await admin.hdel(pending, 'held-task');
    await waitFor(async () => (await admin.acl('GETUSER', username)) === null, {
      message: 'user of the removed agent removed',
      timeoutMs: 5000,
    });
  });

  it('issues the user again in a heartbeat reply when it is missing, and after OFFLINE', async () => {
    const reply = await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 });
    const username = reply.redis!.username;
    expect((await heartbeat(reply)).redis).toBeUndefined();
    // As after a Redis restart without the ACL users: the next heartbeat makes it again.
    await admin.acl('DELUSER', username);
    const again = await heartbeat(reply);
    expect(again.redis?.username).toBe(username);
    expect(again.redis?.password).not.toBe(reply.redis!.password);
    const conn = await connectAs(again.redis!);
    expect(await outcome(() => conn.xadd(reply.acks_stream, '*', 'a', 'b'))).toBe('OK');
    // OFFLINE: the sweep removes the user; the heartbeat that brings the agent back makes it again.
    await waitFor(
      async () => (await admin.hget(reachKeys(prefix).agent('a1'), 'status')) === 'OFFLINE',
      {
        message: 'agent OFFLINE',
        timeoutMs: 5000,
      },
    );
    await waitFor(async () => (await admin.acl('GETUSER', username)) === null, {
      message: 'user of the OFFLINE agent removed',
      timeoutMs: 5000,
    });
    const back = await heartbeat(reply);
    expect(back.status).toBe('HEALTHY');
    expect(back.redis?.username).toBe(username);
    expect(await admin.acl('GETUSER', username)).not.toBeNull();
  });
});

describe('turning REACH_AGENT_ACL on while agents run', () => {
  it('gives an agent registered before its Redis user and its ack key with the next heartbeat', async () => {
    const before = await createRegistryService(
      { redisUrl: testServices().redisUrl, prefix, ...fast },
      { logger: pino({ level: 'silent' }), housekeeping: false },
    );
    let reply: RegisterReply;
    try {
      reply = await register(
        { agent_id: 'old-timer', capabilities: ['echo'], max_concurrency: 1 },
        before,
      );
    } finally {
      await before.close();
    }
    expect(reply.redis).toBeUndefined();
    expect(reply.ack_key).toBeUndefined();
    // A record from before ack keys existed.
    await admin.hdel(reachKeys(prefix).agent('old-timer'), 'ack_key');
    const ack = await heartbeat(reply);
    expect(ack.redis?.username).toBe(`${prefix}|agent|old-timer|${reply.instance_id}`);
    expect(ack.ack_key).toMatch(/^[0-9a-f]{64}$/);
    expect(await admin.hget(reachKeys(prefix).agent('old-timer'), 'ack_key')).toBe(ack.ack_key);
    // The next heartbeat finds the user there and brings nothing new.
    expect((await heartbeat(reply)).redis).toBeUndefined();
  });
});

describe('start-up check', () => {
  it('refuses REACH_AGENT_ACL=on when registry-sync’s own Redis user may not run ACL', async () => {
    const user = `${prefix}|service`;
    await admin.acl('SETUSER', user, 'reset', 'on', '>pw', '+@all', '-@admin', '~*', '&*');
    try {
      const restricted = await connectAs({ username: user, password: 'pw' });
      const acl = new AgentAcl({
        redis: restricted,
        keys: reachKeys(prefix),
        logger: pino({ level: 'silent' }),
      });
      await expect(acl.check()).rejects.toThrow(/REACH_AGENT_ACL=on needs .* may run ACL/);
      await expect(
        new AgentAcl({
          redis: admin,
          keys: reachKeys(prefix),
          logger: pino({ level: 'silent' }),
        }).check(),
      ).resolves.toBeUndefined();
    } finally {
      await admin.acl('DELUSER', user);
    }
  });
});

describe('Redis restarts without the ACL users', () => {
  it('issues the user again in the next heartbeat reply', async () => {
    // A Redis of this test's own, with an append-only file: the records survive, the users do not.
    const own = await startOwnRedis({ persistent: true });
    const sync = await createRegistryService(
      { redisUrl: own.url, prefix, agentAcl: true, ...fast, suspectMs: 10_000, offlineMs: 20_000 },
      { logger: pino({ level: 'silent' }) },
    );
    try {
      const reply = await register(
        { agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 },
        sync,
      );
      const probe = new Redis(own.url, { maxRetriesPerRequest: 1 });
      probe.on('error', () => undefined);
      opened.push(probe);
      expect(await probe.acl('GETUSER', reply.redis!.username)).not.toBeNull();
      own.kill('SIGKILL');
      await own.exited();
      await own.restart();
      expect(await probe.hget(reachKeys(prefix).agent('a1'), 'instance_id')).toBe(
        reply.instance_id,
      );
      expect(await probe.acl('GETUSER', reply.redis!.username)).toBeNull();
      let issued: AgentAck | undefined;
      await waitFor(
        async () => {
          const res = await sync.app.inject({
            method: 'POST',
            url: '/v1/agents/a1/heartbeat',
            headers: { authorization: `Bearer ${reply.token}` },
            payload: { inflight: 0 },
          });
          if (res.statusCode === 200) issued = res.json<AgentAck>();
          return issued !== undefined;
        },
        { message: 'a heartbeat answered after the restart' },
      );
      expect(issued?.redis?.username).toBe(reply.redis!.username);
      const conn = await connectAs(issued!.redis!, own.url);
      expect(await outcome(() => conn.xadd(reply.acks_stream, '*', 'a', 'b'))).toBe('OK');
      expect(await outcome(() => conn.eval('return 1', 0))).toBe('NOPERM');
    } finally {
      await sync.close();
      await own.stop();
    }
  });
});

function decodeFields(fields: string[]): Parameters<typeof encodeAck>[0] {
  const r: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) r[fields[i]!] = fields[i + 1]!;
  return {
    task_id: r['task_id']!,
    stage: 'completed',
    agent_id: r['agent_id']!,
    instance_id: r['instance_id']!,
    epoch: Number(r['epoch']),
    attempt: Number(r['attempt']),
    result: r['result']!,
  };
}
