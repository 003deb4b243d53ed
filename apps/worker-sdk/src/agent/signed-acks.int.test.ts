import { randomBytes } from 'node:crypto';
import { ackSignatureValid, reachKeys, type RegisterReply } from '@agent-reach/protocol';
import { randomPrefix } from '@agent-reach/testkit';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redisUrl, testLogger } from '../testing/support.ts';
import { compileBackoff } from '../util/backoff.ts';
import { AckWriter, type AckTarget } from './acks.ts';
import { useCredentials } from './credentials.ts';

let redis: Redis;
let prefix: string;

beforeEach(() => {
  prefix = randomPrefix();
  redis = new Redis(redisUrl());
});

afterEach(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

function session(ackKey?: string): RegisterReply {
  const keys = reachKeys(prefix);
  return {
    agent_id: 'a1',
    instance_id: 'i1',
    epoch: 2,
    token: '2.secret-secret-secret',
    stream: keys.inbox('a1'),
    group: 'workers',
    acks_stream: keys.acks(),
    heartbeat_interval_ms: 5000,
    lease_ms: 30000,
    pools: [],
    ...(ackKey ? { ack_key: ackKey } : {}),
  };
}

async function writeAcks(reply: RegisterReply, conn: Redis = redis): Promise<string[][]> {
  const acks = new AckWriter({
    redis: conn,
    session: () => reply,
    retry: compileBackoff(undefined, { baseMs: 10, capMs: 50, jitter: 0 }),
    logger: testLogger(),
    stop: new AbortController().signal,
  });
  const target: AckTarget = {
    taskId: 't1',
    attempt: 1,
    messageId: '1-1',
    origin: { stream: reply.stream, group: 'workers', kind: 'inbox' },
    capability: 'echo',
  };
  await acks.receipts([target]);
  await acks.finish(target, { stage: 'completed', result: '{"ok":true}', durationMs: 3 });
  const entries = await redis.xrange(reply.acks_stream, '-', '+');
  return entries.map(([, fields]) => fields);
}

describe('acks of an agent confined to its own Redis user', () => {
  it('are signed with the ack_key of the register reply, every stage', async () => {
    const ackKey = randomBytes(32).toString('hex');
    const written = await writeAcks(session(ackKey));
    expect(written).toHaveLength(2);
    for (const fields of written) {
      expect(fields).toContain('sig');
      expect(ackSignatureValid(fields, ackKey)).toBe(true);
      expect(ackSignatureValid(fields, randomBytes(32).toString('hex'))).toBe(false);
    }
  });

  it('carry no signature when the registry asked for none', async () => {
    const written = await writeAcks(session());
    expect(written).toHaveLength(2);
    for (const fields of written) expect(fields).not.toContain('sig');
  });
});

describe('credentials issued again', () => {
  it('an ack refused while the user is missing is retried and lands once the new password is in use', async () => {
    const reply = session();
    const username = `${prefix}|agent|a1|i1`;
    const rules = ['reset', 'on', '-@all', '+xadd', '+xack', '+client|setname', '~*'];
    await redis.acl('SETUSER', username, ...rules, '>first-password');
    const conn = new Redis(redisUrl(), { lazyConnect: true, retryStrategy: () => 50 });
    conn.on('error', () => undefined);
    useCredentials(conn, { username, password: 'first-password' });
    try {
      await conn.connect();
      // Redis lost the user (a restart) and closed the agent's connection.
      await redis.acl('DELUSER', username);
      const written = writeAcks(reply, conn);
      await new Promise((r) => setTimeout(r, 300));
      // The heartbeat brought new credentials.
      await redis.acl('SETUSER', username, ...rules, '>second-password');
      useCredentials(conn, { username, password: 'second-password' });
      expect(await written).toHaveLength(2);
    } finally {
      conn.disconnect();
      await redis.acl('DELUSER', username);
    }
  });
});
