import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { CallbackMessage } from '@agent-reach/protocol';
import { CallbackPublisher } from '@agent-reach/dispatch';
import { testServices, waitFor } from '@agent-reach/testkit';
import { useScratchRedis } from '../testing/scratch-redis.ts';
import { TaskReader } from '../tasks/task-reader.ts';
import { A2A_PUSH_TOPIC, PushConfigStore } from './push-configs.ts';
import { PUSH_GROUP, PushForwarder } from './push-forwarder.ts';

const scratch = useScratchRedis();

/**
 * What the webhook got: per request, its token header and body; `refuse` answers 500 so often;
 * a request to `/hang` is never answered (until `hanging` is ended).
 */
const hook = {
  got: [] as { token: string | undefined; body: string }[],
  refuse: 0,
  hanging: [] as ServerResponse[],
};
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const token = req.headers['x-a2a-notification-token'];
      hook.got.push({
        token: typeof token === 'string' ? token : undefined,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (req.url === '/hang') hook.hanging.push(res);
      else if (hook.refuse > 0) {
        hook.refuse -= 1;
        res.writeHead(500).end();
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A completed task in Redis, kept a minute. */
async function completedTask(id: string): Promise<void> {
  const { redis, keys } = scratch;
  await redis.hset(keys.task(id), {
    status: 'completed',
    capability: 'cap',
    attempt: '1',
    created_at: String(Date.now()),
    completed_at: String(Date.now()),
    result: JSON.stringify({ of: id }),
    callback_topic: A2A_PUSH_TOPIC,
  });
  await redis.pexpire(keys.task(id), 60_000);
}

const final = (id: string): CallbackMessage => ({
  task_id: id,
  status: 'completed',
  capability: 'cap',
  agent_id: 'a1',
  attempt: 1,
  completed_at: Date.now(),
  result: JSON.stringify({ of: id }),
});

function forwarder(
  store: PushConfigStore,
  send = { timeoutMs: 2000, attempts: 3, backoffMs: 50 },
): PushForwarder {
  const { redis, keys } = scratch;
  return new PushForwarder({
    conn: new Redis(testServices().redisUrl),
    redis,
    keys,
    store,
    tasks: new TaskReader({ redis, keys }),
    logger: pino({ level: 'silent' }),
    send,
    claimIdleMs: 300,
    blockMs: 200,
  });
}

/** What saving `config` as task `t-closed`'s throws. */
async function saveRefusal(
  s: PushConfigStore,
  config: TaskPushNotificationConfig,
): Promise<unknown> {
  return s.save('t-closed', config, '1.0').then(
    () => undefined,
    (err: unknown) => err,
  );
}

/** The test Redis's port: a loopback service that is not HTTP. */
const redisPort = () => new URL(testServices().redisUrl).port || '6379';

const pending = async () =>
  Number(
    (
      (await scratch.redis.xpending(scratch.keys.callback(A2A_PUSH_TOPIC), PUSH_GROUP)) as [number]
    )[0],
  );

describe('the A2A push forwarder', () => {
  it('posts a task with a config to its webhook, again after a refusal, and acknowledges every final item', async () => {
    const { redis, keys } = scratch;
    const store = new PushConfigStore({ redis, keys, allowed: { hosts: [], loopback: true } });
    const publisher = new CallbackPublisher({
      redis,
      keys,
      settings: {
        callbackRetentionS: 60,
        callbackMaxLen: 1000,
      },
    });
    await completedTask('with-config');
    await completedTask('without-config');
    await store.save(
      'with-config',
      { tenant: '', id: 'c1', taskId: '', url, token: 'tok', authentication: undefined },
      '1.0',
    );
    hook.refuse = 1;
    const fwd = forwarder(store);
    fwd.start();
    try {
      await publisher.publish(A2A_PUSH_TOPIC, final('without-config'));
      await publisher.publish(A2A_PUSH_TOPIC, final('with-config'));
      await waitFor(() => hook.got.length >= 2 && hook.refuse === 0);
      await waitFor(async () => (await pending()) === 0);
      expect(hook.got.map((g) => g.token)).toEqual(['tok', 'tok']);
      const body = JSON.parse(hook.got[1]?.body ?? '{}') as {
        task?: { id: string; status: { state: string } };
      };
      expect(body.task?.id).toBe('with-config');
      expect(body.task?.status.state).toBe('TASK_STATE_COMPLETED');
      // The configs now expire with the task.
      const ttl = await redis.pttl(keys.a2aPush('with-config'));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await fwd.close();
    }
  });

  it('claims and delivers an item a router read and never acknowledged (it died)', async () => {
    const { redis, keys } = scratch;
    const store = new PushConfigStore({ redis, keys, allowed: { hosts: [], loopback: true } });
    await completedTask('orphan');
    await store.save(
      'orphan',
      { tenant: '', id: 'c1', taskId: '', url, token: 'orphan-tok', authentication: undefined },
      '1.0',
    );
    await new CallbackPublisher({
      redis,
      keys,
      settings: {
        callbackRetentionS: 60,
        callbackMaxLen: 1000,
      },
    }).publish(A2A_PUSH_TOPIC, final('orphan'));
    const key = keys.callback(A2A_PUSH_TOPIC);
    const read = (await redis.xreadgroup(
      'GROUP',
      PUSH_GROUP,
      'dead-router',
      'COUNT',
      10,
      'STREAMS',
      key,
      '>',
    )) as [string, [string, string[]][]][] | null;
    expect(read?.[0]?.[1].length).toBe(1);
    const before = hook.got.length;
    const fwd = forwarder(store);
    fwd.start();
    try {
      await waitFor(() => hook.got.slice(before).some((g) => g.token === 'orphan-tok'));
      await waitFor(async () => (await pending()) === 0);
    } finally {
      await fwd.close();
    }
  });

  it('refuses a webhook on a host that is neither loopback nor allowed', async () => {
    const { redis, keys } = scratch;
    const store = new PushConfigStore({
      redis,
      keys,
      allowed: { hosts: ['hooks.example.com'], loopback: true },
    });
    const config = { tenant: '', id: '', taskId: '', token: '', authentication: undefined };
    await expect(
      store.save('t', { ...config, url: 'http://metadata.internal/x' }, '1.0'),
    ).rejects.toMatchObject({ code: 'PUSH_URL_NOT_ALLOWED' });
    await expect(
      store.save('t', { ...config, url: 'http://user:pw@localhost/x' }, '1.0'),
    ).rejects.toMatchObject({ code: 'PUSH_URL_NOT_ALLOWED' });
    const saved = await store.save('t', { ...config, url: 'https://hooks.example.com/x' }, '1.0');
    expect(saved.id).not.toBe('');
    expect((await store.list('t')).map((c) => c.config.url)).toEqual([
      'https://hooks.example.com/x',
    ]);
  });

  it('with API keys required and no REACH_OUTBOUND_LOOPBACK=on: every loopback URL refused alike, and a stored one not sent to', async () => {
    const { redis, keys } = scratch;
    const open = new PushConfigStore({ redis, keys, allowed: { hosts: [], loopback: true } });
    const closed = new PushConfigStore({ redis, keys, allowed: { hosts: [], loopback: false } });
    const config = { tenant: '', id: '', taskId: '', token: '', authentication: undefined };
    // The hook listens on one; nothing on the others: the answers are the same.
    const messages = new Set<string>();
    for (const target of [url, 'http://127.0.0.1:1/x', `http://127.0.0.1:${redisPort()}/`]) {
      const refusal = await saveRefusal(closed, { ...config, url: target });
      expect(refusal).toMatchObject({ code: 'PUSH_URL_NOT_ALLOWED' });
      messages.add((refusal as Error).message);
    }
    expect([...messages]).toEqual([
      'push url host 127.0.0.1 is not in REACH_A2A_PUSH_HOSTS (a loopback host needs REACH_OUTBOUND_LOOPBACK=on while API keys are required); ask the operator to allow the host',
    ]);
    expect(await closed.list('t-closed')).toEqual([]);
    // Saved while loopback was allowed, sent after a restart that no longer allows it: not sent.
    await completedTask('was-open');
    await open.save('was-open', { ...config, id: 'c1', url, token: 'was-open' }, '1.0');
    const before = hook.got.length;
    const fwd = forwarder(closed);
    fwd.start();
    try {
      await new CallbackPublisher({
        redis,
        keys,
        settings: { callbackRetentionS: 60, callbackMaxLen: 1000 },
      }).publish(A2A_PUSH_TOPIC, final('was-open'));
      await waitFor(async () => (await pending()) === 0);
      expect(hook.got.slice(before).map((g) => g.token)).not.toContain('was-open');
    } finally {
      await fwd.close();
    }
  });

  it('a webhook that does not answer holds up no other task', async () => {
    const { redis, keys } = scratch;
    const store = new PushConfigStore({ redis, keys, allowed: { hosts: [], loopback: true } });
    const config = { tenant: '', id: 'c1', taskId: '', authentication: undefined };
    await completedTask('slow');
    await completedTask('quick');
    await store.save('slow', { ...config, url: new URL('/hang', url).href, token: 'slow' }, '1.0');
    await store.save('quick', { ...config, url, token: 'quick' }, '1.0');
    const publisher = new CallbackPublisher({
      redis,
      keys,
      settings: {
        callbackRetentionS: 60,
        callbackMaxLen: 1000,
      },
    });
    // One long try: the slow webhook is still on it when the quick one is sent.
    const fwd = forwarder(store, { timeoutMs: 60_000, attempts: 1, backoffMs: 50 });
    fwd.start();
    try {
      await publisher.publish(A2A_PUSH_TOPIC, final('slow'));
      await waitFor(() => hook.hanging.length > 0);
      await publisher.publish(A2A_PUSH_TOPIC, final('quick'));
      await waitFor(() => hook.got.some((g) => g.token === 'quick'));
      expect(hook.hanging).toHaveLength(1);
      expect(hook.hanging[0]?.writableEnded).toBe(false);
    } finally {
      await fwd.close();
      for (const res of hook.hanging) if (!res.writableEnded) res.writeHead(204).end();
    }
  });
});
