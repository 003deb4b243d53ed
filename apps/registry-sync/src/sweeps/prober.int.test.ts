/**
 * Liveness probes are told apart from callers' tasks by the mark on their pending entry, never by
 * their task_id: a probe answered by a raw worker is recorded as a probe, and a caller's task
 * whose id starts with `probe:` is an ordinary task.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  decodeCallback,
  encodeAck,
  PROBE_CAPABILITY,
  reachKeys,
  type AckMessage,
  type ReachKeys,
  type RegisterReply,
} from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

let service: RegistryService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;

beforeEach(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      heartbeatIntervalMs: 100,
      suspectMs: 5000,
      offlineMs: 10_000,
      sweepIntervalMs: 50,
      snapshotIntervalMs: 200,
      probeIntervalMs: 100,
    },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: 'a1', capabilities: ['echo'], max_concurrency: 4 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

const ack = (
  reg: RegisterReply,
  taskId: string,
  body: Pick<AckMessage, 'stage'> & Partial<AckMessage>,
) =>
  redis.xadd(
    keys.acks(),
    '*',
    ...encodeAck({
      task_id: taskId,
      agent_id: reg.agent_id,
      instance_id: reg.instance_id,
      epoch: reg.epoch,
      attempt: 1,
      ...body,
    }),
  );

const refusals = async (): Promise<Record<string, string>> =>
  Object.fromEntries(
    Object.entries(await redis.hgetall(keys.stats())).filter(([k]) =>
      k.startsWith('acks_refused:'),
    ),
  );

describe('liveness probes', () => {
  it('are marked on their pending entry, and answered probes free the slot without a task', async () => {
    const reg = await register();
    const [taskId, entry] = await waitFor(
      async () => {
        const pending = Object.entries(await redis.hgetall(keys.pending('a1')));
        return pending.length > 0 && pending[0];
      },
      { message: 'a probe delivered' },
    );
    expect(entry).toMatch(/^1\|\d+\|probe\|/);
    const [[, fields] = ['', []]] = await redis.xrange(keys.inbox('a1'), '-', '+');
    expect(fields).toEqual(
      expect.arrayContaining(['task_id', taskId, 'capability', PROBE_CAPABILITY]),
    );

    await ack(reg, taskId, { stage: 'received' });
    await ack(reg, taskId, {
      stage: 'completed',
      result: '{}',
      capability: PROBE_CAPABILITY,
      duration_ms: 0,
    });
    await waitFor(async () => !(await redis.hexists(keys.pending('a1'), taskId)), {
      message: 'probe slot freed',
    });
    expect(await redis.exists(keys.task(taskId))).toBe(0);
    expect(await refusals()).toEqual({});
    // A probe's speed is no sample of the agent's work.
    expect(await redis.hget(keys.agent('a1'), `ewma:${PROBE_CAPABILITY}`)).toBeNull();
  });

  it('never take a caller’s task for one: a task_id starting with probe: completes and publishes its result', async () => {
    const reg = await register();
    const taskId = 'probe:x';
    // What the send path leaves for a caller's task delivered to a1: state, inbox entry, slot.
    const entryId = (await redis.xadd(keys.inbox('a1'), '*', 'task_id', taskId)) as string;
    await redis.hset(keys.task(taskId), {
      task_id: taskId,
      capability: 'echo',
      status: 'sent',
      attempt: 1,
      agent_id: 'a1',
      epoch: reg.epoch,
      callback_topic: 'mine',
      trace_id: '',
      sent_at: Date.now(),
    });
    await redis.hset(keys.pending('a1'), taskId, `1|${reg.epoch}||${entryId}|0|0`);
    await ack(reg, taskId, { stage: 'received' });
    await ack(reg, taskId, {
      stage: 'completed',
      result: '"done"',
      capability: 'echo',
      duration_ms: 3,
    });
    await waitFor(async () => (await redis.hget(keys.task(taskId), 'status')) === 'completed', {
      message: 'caller task completed',
    });
    const published = (await redis.xrange(keys.callback('mine'), '-', '+')).map(([, f]) =>
      decodeCallback(f),
    );
    expect(published).toMatchObject([{ task_id: taskId, status: 'completed', result: '"done"' }]);
    expect(await redis.hexists(keys.pending('a1'), taskId)).toBe(0);
    expect(await refusals()).toEqual({});
  });
});
