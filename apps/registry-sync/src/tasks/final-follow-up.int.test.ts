/**
 * A final state is written in steps on keys of different slots: the task turns `cancelled` or
 * `dead`, then its callback is published (and the agent told, the dead letter indexed). A writer
 * that fails between them (here: its connection for the callback is gone, as when a Cluster master
 * is lost) must not leave a final task whose caller never hears of it: registry-sync finds the
 * follow-up entry written before the change and publishes the callback, once. A cancel still
 * answers as done, and a caller who cancels again gets it done at once. A process that dies in
 * between leaves the same entry behind.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  followUpMember,
  decodeCallback,
  reachKeys,
  type CallbackMessage,
  type ReachKeys,
} from '@agent-reach/protocol';
import {
  CallbackPublisher,
  DeadLetterer,
  defineDispatchCommands,
  FleetEventLog,
  TaskCanceller,
} from '@agent-reach/dispatch';
import { createEventSink } from '@agent-reach/events';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { TaskOutcomes } from './outcomes.ts';

const silent = pino({ level: 'silent' });
let redis: Redis;
/** A connection to a port where nothing listens: every command on it fails at once. */
let cut: Redis;
let keys: ReachKeys;
let service: RegistryService;

beforeAll(async () => {
  const prefix = randomPrefix();
  keys = reachKeys(prefix);
  redis = new Redis(testServices().redisUrl);
  cut = new Redis({
    host: '127.0.0.1',
    port: 1,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  cut.on('error', () => undefined);
  defineDispatchCommands(redis);
  defineDispatchCommands(cut);
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, sweepIntervalMs: 50 },
    { logger: silent },
  );
}, 30_000);

afterAll(async () => {
  await service?.close();
  await redis?.quit();
  cut?.disconnect();
});

function publisher(on: Redis): CallbackPublisher {
  return new CallbackPublisher({
    redis: on,
    keys,
    settings: { callbackRetentionS: 600, callbackMaxLen: 1000 },
  });
}

/** A canceller as a router has one; `publishOn` is the connection its callbacks go through. */
function canceller(publishOn: Redis): TaskCanceller {
  return new TaskCanceller({
    redis,
    keys,
    callbacks: publisher(publishOn),
    events: createEventSink({ logger: silent }),
    logger: silent,
    retentionS: () => 600,
  });
}

/** Retry decisions as registry-sync takes them; `publishOn` carries the dead-letter notices. */
function outcomes(publishOn: Redis): TaskOutcomes {
  const events = createEventSink({ logger: silent });
  const fleet = new FleetEventLog({ redis, keys, logger: silent });
  return new TaskOutcomes({
    redis,
    keys,
    events,
    fleet,
    deadLetters: new DeadLetterer({
      redis,
      keys,
      events,
      callbacks: publisher(publishOn),
      fleet,
      logger: silent,
      dlqRetentionS: () => 600,
    }),
    settings: { retryBaseMs: 100, retryCapMs: 1000, maxAttempts: 3, dlqRetentionS: 600 },
    logger: silent,
  });
}

/** A task an agent is running, with a callback topic of its own. */
async function runningTask(taskId: string, agentId: string, topic: string): Promise<void> {
  const now = Date.now();
  await redis.hset(keys.task(taskId), {
    status: 'received',
    capability: 'echo',
    payload: '{}',
    attempt: '1',
    epoch: '1',
    agent_id: agentId,
    callback_topic: topic,
    created_at: String(now - 1000),
    received_at: String(now - 500),
  });
}

async function topicItems(topic: string): Promise<CallbackMessage[]> {
  const entries = await redis.xrange(keys.callback(topic), '-', '+');
  return entries.map(([, fields]) => decodeCallback(fields));
}

/** The topic's items once it holds at least `count` (registry-sync publishes them). */
function itemsArriving(topic: string, count = 1): Promise<CallbackMessage[]> {
  return waitFor(
    async () => {
      const found = await topicItems(topic);
      return found.length >= count && found;
    },
    { timeoutMs: 8000 },
  );
}

/** The task's follow-up entry's score, null without one. */
function followUpOf(taskId: string): Promise<string | null> {
  return redis.zscore(keys.dueOf(taskId), followUpMember(taskId));
}

/**
 * Resolves once registry-sync has completed two more full housekeeping passes: at least one of
 * them began after the call, so it saw every due entry that was due by then.
 */
function twoMorePasses(): Promise<unknown> {
  const from = service.housekeeper.passes.full;
  return waitFor(() => service.housekeeper.passes.full >= from + 2, {
    intervalMs: 10,
    message: 'registry-sync did not sweep again',
  });
}

function followUpGone(taskId: string, timeoutMs: number): Promise<unknown> {
  return waitFor(async () => (await followUpOf(taskId)) === null, { timeoutMs });
}

async function cancelNotices(agentId: string, taskId: string): Promise<number> {
  const entries = await redis.xrange(keys.control(agentId), '-', '+');
  return entries.filter(([, f]) => f.includes(taskId) && f.includes('cancel')).length;
}

describe('a cancel whose follow-up failed midway', () => {
  it('still reaches the callback topic, once, through registry-sync', async () => {
    const [taskId, agentId, topic] = ['cx-1', 'agent-cx-1', 'topic-cx-1'];
    await runningTask(taskId, agentId, topic);

    // The cancel took effect, so it answers as done; its caller's topic has nothing yet.
    expect(await canceller(cut).cancel(taskId, 'key-1')).toEqual({
      kind: 'cancelled',
      taskId,
      children: 0,
    });
    expect(await redis.hget(keys.task(taskId), 'status')).toBe('cancelled');
    expect(await topicItems(topic)).toEqual([]);
    expect(await followUpOf(taskId)).not.toBeNull();

    const items = await itemsArriving(topic);
    expect(items.map((x) => [x.task_id, x.status, x.error])).toEqual([
      [taskId, 'cancelled', 'cancelled by key-1'],
    ]);
    // The agent was told to stop (by the first try and again by the follow-up: a notice for a
    // task it no longer runs changes nothing), and the follow-up entry is gone.
    expect(await cancelNotices(agentId, taskId)).toBeGreaterThan(0);
    await followUpGone(taskId, 2000);
    // Later sweeps publish nothing more.
    await twoMorePasses();
    expect(await topicItems(topic)).toHaveLength(1);
  }, 20_000);

  it('is done at once when the caller cancels again, and not twice', async () => {
    const [taskId, agentId, topic] = ['cx-2', 'agent-cx-2', 'topic-cx-2'];
    await runningTask(taskId, agentId, topic);

    await canceller(cut).cancel(taskId, 'key-1');
    expect(await topicItems(topic)).toEqual([]);
    const followUpAt = Number(await followUpOf(taskId));
    expect(followUpAt).toBeGreaterThan(0);
    const again = await canceller(redis).cancel(taskId, 'key-2');
    expect(again).toEqual({ kind: 'cancelled', taskId, children: 0 });
    // Published at once, naming who cancelled first, and the follow-up entry is gone.
    const items = await topicItems(topic);
    expect(items.map((x) => [x.status, x.error])).toEqual([['cancelled', 'cancelled by key-1']]);
    expect(await followUpOf(taskId)).toBeNull();
    expect(await redis.hget(keys.task(taskId), 'cancelled_by')).toBe('key-1');
    // Sweeps begun after the time registry-sync would have followed it up: still one item.
    await waitFor(() => Date.now() >= followUpAt, { timeoutMs: 10_000 });
    await twoMorePasses();
    expect(await topicItems(topic)).toHaveLength(1);
  }, 20_000);

  it('cancels the children too when registry-sync does the follow-up', async () => {
    const [parent, child, agentId, topic] = ['cx-4', 'cx-4-child', 'agent-cx-4', 'topic-cx-4'];
    await runningTask(parent, agentId, topic);
    await runningTask(child, agentId, topic);
    await redis.sadd(keys.children(parent), child);

    await canceller(cut).cancel(parent, 'key-1');
    expect(await redis.hget(keys.task(child), 'status')).toBe('received');

    const items = await itemsArriving(topic, 2);
    expect(items.map((x) => [x.task_id, x.status]).sort()).toEqual([
      [parent, 'cancelled'],
      [child, 'cancelled'],
    ]);
    expect(await redis.hget(keys.task(child), 'status')).toBe('cancelled');
  }, 20_000);

  it('leaves a task the cancel never reached as it was', async () => {
    // What a cancel that failed before its script ran leaves: only the follow-up entry.
    const [taskId, agentId, topic] = ['cx-3', 'agent-cx-3', 'topic-cx-3'];
    await runningTask(taskId, agentId, topic);
    await redis.zadd(keys.dueOf(taskId), Date.now() - 10, followUpMember(taskId));

    await followUpGone(taskId, 5000);
    expect(await redis.hget(keys.task(taskId), 'status')).toBe('received');
    expect(await topicItems(topic)).toEqual([]);
    expect(await cancelNotices(agentId, taskId)).toBe(0);
  }, 20_000);
});

describe('a death whose announcement failed midway', () => {
  it('still reaches the dead letters and the callback topic, once, through registry-sync', async () => {
    const [taskId, agentId, topic] = ['dx-1', 'agent-dx-1', 'topic-dx-1'];
    await runningTask(taskId, agentId, topic);

    await expect(
      outcomes(cut).retry({
        taskId,
        attempt: 1,
        reason: 'failed',
        agentId,
        error: 'boom',
        terminal: 'not_retryable',
      }),
    ).rejects.toThrow();
    expect(await redis.hget(keys.task(taskId), 'status')).toBe('dead');
    expect(await topicItems(topic)).toEqual([]);
    expect(await followUpOf(taskId)).not.toBeNull();

    const items = await itemsArriving(topic);
    expect(items.map((x) => [x.task_id, x.status, x.error, x.attempt])).toEqual([
      [taskId, 'dead', 'not_retryable', 1],
    ]);
    expect(await redis.zscore(keys.dlq(), taskId)).not.toBeNull();
    await followUpGone(taskId, 2000);
    await twoMorePasses();
    expect(await topicItems(topic)).toHaveLength(1);
  }, 20_000);

  it('leaves no follow-up entry behind a retry or a death announced in full', async () => {
    const [taskId, agentId, topic] = ['dx-2', 'agent-dx-2', 'topic-dx-2'];
    await runningTask(taskId, agentId, topic);
    const decide = outcomes(redis);

    const first = await decide.retry({ taskId, attempt: 1, reason: 'failed', agentId });
    expect(first.kind).toBe('retry');
    expect(await followUpOf(taskId)).toBeNull();
    // The retry's own due entry stays: it brings the next attempt.
    expect(await redis.zscore(keys.dueOf(taskId), taskId)).not.toBeNull();

    await redis.hset(keys.task(taskId), { status: 'received', attempt: '2' });
    const second = await decide.retry({
      taskId,
      attempt: 2,
      reason: 'failed',
      agentId,
      terminal: 'not_retryable',
    });
    expect(second.kind).toBe('dead');
    expect(await redis.zrange(keys.dueOf(taskId), 0, -1)).not.toContain(followUpMember(taskId));
    expect((await topicItems(topic)).map((x) => [x.status, x.attempt])).toEqual([['dead', 2]]);
  }, 20_000);
});
