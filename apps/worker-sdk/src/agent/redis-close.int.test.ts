/**
 * Closing a connection that waits to reconnect, on a real Redis: the agent's Redis user was
 * removed (REACH_AGENT_ACL=on, the registry removed the agent) and every reconnect is refused. A
 * drained agent closes in that state; its stop must not wait for ever on a read that the
 * connection holds in its queue.
 */
import { randomPrefix } from '@agent-reach/testkit';
import { disconnectNow } from '@agent-reach/service-kit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisterReply } from '@agent-reach/protocol';
import { redisUrl, testLogger } from '../testing/support.ts';
import { ControlReader } from './control.ts';
import { useCredentials } from './credentials.ts';
import { closeRedis } from './redis-util.ts';

let admin: Redis;
const users: string[] = [];

beforeAll(() => {
  admin = new Redis(redisUrl());
});

afterAll(async () => {
  for (const user of users) await admin.acl('DELUSER', user);
  await admin.quit();
});

/** A connection signed in as a user of its own, which may read streams; and a stream of it. */
async function signedIn(): Promise<{ conn: Redis; username: string; stream: string }> {
  const username = `${randomPrefix()}|agent`;
  users.push(username);
  await admin.acl('SETUSER', username, 'reset', 'on', '>pw', '-@all', '+xread', '~*');
  // A refused reconnect is tried again 1 s later: it waits to reconnect most of the time.
  const conn = new Redis(redisUrl(), { lazyConnect: true, retryStrategy: () => 1000 });
  conn.on('error', () => undefined);
  useCredentials(conn, { username, password: 'pw' });
  await conn.connect();
  return { conn, username, stream: `${username}:control` };
}

/**
 * A connection signed in as a user of its own, whose user is then removed: Redis closes it, and
 * each reconnect is refused (WRONGPASS) and tried again 1 s later. Resolves once it waits to
 * reconnect, with a stream read queued behind that wait.
 */
async function strandedRead(): Promise<{ conn: Redis; read: Promise<string> }> {
  const { conn, username, stream } = await signedIn();
  const first = conn.xread('BLOCK', 10_000, 'STREAMS', stream, '$').catch(() => undefined);
  await admin.acl('DELUSER', username);
  await first;
  await waitUntil(() => conn.status === 'reconnecting');
  // The read a control loop sends next: queued until a reconnect that never succeeds.
  const read = conn.xread('BLOCK', 10_000, 'STREAMS', stream, '$').then(
    () => 'answered',
    (err: unknown) => `rejected: ${(err as Error).message}`,
  );
  return { conn, read };
}

async function waitUntil(check: () => boolean): Promise<void> {
  const until = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met within 5 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What `read` settled with within `ms`, or 'pending'. */
const within = (read: Promise<string>, ms: number) =>
  Promise.race([read, new Promise<string>((r) => setTimeout(() => r('pending'), ms))]);

describe('a connection waiting to reconnect', () => {
  it('is closed by disconnectNow, its queued read rejected at once', async () => {
    const { conn, read } = await strandedRead();
    disconnectNow(conn);
    expect(await within(read, 500)).toBe('rejected: Connection is closed.');
    expect(conn.status).toBe('end');
  });

  it('is closed by closeRedis without a goodbye, its queued read rejected', async () => {
    const { conn, read } = await strandedRead();
    const started = Date.now();
    await closeRedis(conn);
    expect(Date.now() - started).toBeLessThan(500);
    expect(await within(read, 500)).toBe('rejected: Connection is closed.');
    expect(conn.status).toBe('end');
  });

  it('lets the agent’s control reader stop once its user is gone', async () => {
    const { conn, username, stream } = await signedIn();
    const reader = new ControlReader({
      redis: conn,
      session: () => ({ control_stream: stream }) as RegisterReply,
      onCancel: () => undefined,
      blockMs: 10_000,
      logger: testLogger(),
    });
    reader.start();
    await admin.acl('DELUSER', username);
    // Its read refused, the reader tries again 500 ms later: that read waits in the queue.
    const queued = () => (conn as unknown as { offlineQueue: { length: number } }).offlineQueue;
    await waitUntil(() => conn.status === 'reconnecting' && queued().length > 0);
    const stopped = reader.stop().then(() => 'stopped');
    expect(await within(stopped, 1000)).toBe('stopped');
  });
});
