/**
 * A pooled task is taken only by a pull agent that may take it: registry-sync checks the task's
 * stored placement (tags, region, region_policy) against the agent's registration when the first
 * receipt arrives, on real Redis with the acks consumer running.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  encodeAck,
  encodeTask,
  reachKeys,
  WORKER_GROUP,
  type AckMessage,
  type ReachKeys,
  type RegisterReply,
  type TaskMessage,
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
    { redisUrl: testServices().redisUrl, prefix, probeIntervalMs: 60_000 },
    // No sweeps: what happens here is the acks consumer's alone.
    { logger: pino({ level: 'silent' }), housekeeping: false },
  );
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(body: Record<string, unknown>): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { capabilities: ['embed'], max_concurrency: 2, channel: 'pull', ...body },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

/** A pooled task as the send path leaves it: stored with its placement, its entry in the pool. */
async function poolTask(
  taskId: string,
  placement: { tags?: string[]; region?: string; region_policy?: 'strict' | 'prefer' },
): Promise<string> {
  await redis.hset(keys.task(taskId), {
    task_id: taskId,
    capability: 'embed',
    status: 'sent',
    attempt: 1,
    agent_id: '',
    epoch: '',
    callback_topic: 'results',
    trace_id: '',
    sent_at: Date.now(),
    tags: JSON.stringify(placement.tags ?? []),
    region: placement.region ?? '',
    region_policy: placement.region_policy ?? '',
  });
  const task: TaskMessage = {
    task_id: taskId,
    capability: 'embed',
    payload: '{"n":1}',
    attempt: 1,
    trace_id: '',
    callback_topic: 'results',
    deadline_ms: 0,
    ...placement,
  };
  return (await redis.xadd(keys.pool('embed'), '*', ...encodeTask(task))) as string;
}

/** Reads the pool as the agent's consumer, as a raw pull worker does. */
async function read(reg: RegisterReply): Promise<string[]> {
  const reply = (await redis.xreadgroup(
    'GROUP',
    WORKER_GROUP,
    reg.instance_id,
    'COUNT',
    10,
    'STREAMS',
    keys.pool('embed'),
    '>',
  )) as [string, [string, string[]][]][] | null;
  return (reply?.[0]?.[1] ?? []).map(([id]) => id);
}

async function ack(
  reg: RegisterReply,
  taskId: string,
  entryId: string,
  body: Pick<AckMessage, 'stage'> & Partial<AckMessage>,
): Promise<void> {
  await redis.xadd(
    keys.acks(),
    '*',
    ...encodeAck({
      task_id: taskId,
      agent_id: reg.agent_id,
      instance_id: reg.instance_id,
      epoch: reg.epoch,
      attempt: 1,
      pool: 'embed',
      message_id: entryId,
      ...body,
    }),
  );
}

const refused = async (reason: string): Promise<number> =>
  Number((await redis.hget(keys.stats(), `acks_refused:${reason}`)) ?? 0);

const poolIds = async (): Promise<string[]> =>
  (await redis.xrange(keys.pool('embed'), '-', '+')).map(([id]) => id);

describe('a pooled task', () => {
  it.each([
    ['a strict region elsewhere', { region: 'eu', region_policy: 'strict' as const }],
    ['a tag the agent lacks', { tags: ['gpu'] }],
  ])(
    'refuses a forged receipt from a pull agent with %s, frees its slot and puts the entry back for one that may take it',
    async (_name, placement) => {
      const us = await register({ agent_id: 'us-1', region: 'us' });
      const eu = await register({ agent_id: 'eu-1', region: 'eu', tags: ['gpu'] });
      const entry = await poolTask('t1', placement);
      expect(await read(us)).toEqual([entry]);
      await ack(us, 't1', entry, { stage: 'received' });
      await waitFor(async () => (await refused('not_eligible')) === 1, {
        message: 'receipt refused as not_eligible',
      });
      // The slot the receipt took is free again, and the task still waits for an agent.
      await waitFor(async () => (await redis.hlen(keys.pending('us-1'))) === 0);
      expect(await redis.hmget(keys.task('t1'), 'agent_id', 'status')).toEqual(['', 'sent']);
      // The old entry is gone; a copy waits in the pool, even after the worker XACKs the old one.
      const [copy] = await waitFor(async () => {
        const ids = await poolIds();
        return ids.length === 1 && ids[0] !== entry && ids;
      });
      await redis.xack(keys.pool('embed'), WORKER_GROUP, entry);
      // Its completion, had it run the task anyway, is refused too and adds no second copy.
      await ack(us, 't1', entry, { stage: 'completed', result: '"wrong"' });
      await waitFor(async () => (await refused('not_eligible')) === 2);
      expect(await poolIds()).toEqual([copy]);

      // An agent that may take it takes it and completes it.
      expect(await read(eu)).toEqual([copy]);
      await ack(eu, 't1', copy as string, { stage: 'received' });
      await ack(eu, 't1', copy as string, { stage: 'completed', result: '"right"' });
      await waitFor(async () => (await redis.hget(keys.task('t1'), 'status')) === 'completed');
      expect(await redis.hmget(keys.task('t1'), 'agent_id', 'result')).toEqual(['eu-1', '"right"']);
      const published = await redis.xrange(keys.callback('results'), '-', '+');
      expect(published).toHaveLength(1);
      expect(await poolIds()).toEqual([]);
      expect(await refused('not_eligible')).toBe(2);
    },
  );

  it('lets any pull agent take a task that prefers a region, and one that offers a tag as a capability', async () => {
    const us = await register({ agent_id: 'us-1', region: 'us', capabilities: ['embed', 'gpu'] });
    const prefer = await poolTask('t1', { region: 'eu', region_policy: 'prefer', tags: ['gpu'] });
    expect(await read(us)).toEqual([prefer]);
    await ack(us, 't1', prefer, { stage: 'received' });
    await waitFor(async () => (await redis.hget(keys.task('t1'), 'agent_id')) === 'us-1');
    expect(await refused('not_eligible')).toBe(0);
  });
});
