/**
 * A streamed task's output acks put their items on its callback topic through the one writer of
 * callback-topic entries (CallbackPublisher.append): one XADD per item and one EXPIRE, on real
 * Redis.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import {
  decodeCallback,
  reachKeys,
  type AckMessage,
  type OutputStage,
  type ReachKeys,
} from '@agent-reach/protocol';
import { CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink, TaskEvent } from '@agent-reach/events';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { outputScript } from '../commands/output.ts';
import { OutputStep } from './output-step.ts';

const TOPIC = 'streamed';
const RETENTION_S = 600;

let redis: Redis;
let prefix: string;
let keys: ReachKeys;
let written: TaskEvent[];

beforeEach(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  redis = new Redis(testServices().redisUrl);
  loadScripts(redis, [outputScript]);
  written = [];
  // A running task submitted with `stream: true`, assigned to a1 under epoch 1.
  await redis.hset(keys.task('t1'), {
    status: 'received',
    attempt: 1,
    agent_id: 'a1',
    epoch: 1,
    capability: 'cap',
    callback_topic: TOPIC,
    stream_out: '1',
    received_at: 1000,
  });
});

afterEach(async () => {
  const left = await redis.keys(`*${prefix}*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

/** An output step with events collected in `written`, keeping at most `maxChunks` items. */
function outputStep(maxChunks = 100): OutputStep {
  const events = { write: (e: TaskEvent) => written.push(e) } as unknown as EventSink;
  const settings = { callbackRetentionS: RETENTION_S, callbackMaxLen: 1000 };
  return new OutputStep({
    redis,
    keys,
    events,
    callbacks: new CallbackPublisher({ redis, keys, settings }),
    settings: { streamMaxChunks: maxChunks, streamMaxBytes: 1 << 20, taskRetentionS: 3600 },
    logger: pino({ level: 'silent' }),
  });
}

/** A chunk ack of t1 from a1. */
const chunks = (...data: string[]): AckMessage & { stage: OutputStage } => ({
  task_id: 't1',
  stage: 'chunk',
  agent_id: 'a1',
  instance_id: 'i1',
  epoch: 1,
  attempt: 1,
  chunks: data,
});

async function topicItems() {
  const entries = await redis.xrange(keys.callback(TOPIC), '-', '+');
  return entries.map(([, fields]) => decodeCallback(fields));
}

describe('OutputStep', () => {
  it('writes each kept chunk on the topic with one XADD each and one EXPIRE', async () => {
    const xadd = vi.spyOn(redis, 'xadd');
    const expire = vi.spyOn(redis, 'expire');
    const done = await outputStep().apply(chunks('a', 'b'), '2000-0', 2000);
    expect(done).toEqual({ applied: true });
    expect(xadd).toHaveBeenCalledTimes(2);
    expect(expire).toHaveBeenCalledTimes(1);
    const items = await topicItems();
    expect(items).toMatchObject([
      { task_id: 't1', status: 'chunk', chunk: 'a', capability: 'cap', agent_id: 'a1' },
      { task_id: 't1', status: 'chunk', chunk: 'b', attempt: 1, completed_at: 2000 },
    ]);
    const ttl = await redis.ttl(keys.callback(TOPIC));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(RETENTION_S);
    expect(written.map((e) => e.stage)).toEqual(['streaming']);
  });

  it('ends with a truncated item at the bound, and an ack applied again writes nothing', async () => {
    const step = outputStep(1);
    await step.apply(chunks('a', 'b'), '2000-0', 2000);
    await step.apply(chunks('a', 'b'), '2000-0', 2000);
    expect((await topicItems()).map((m) => m.status)).toEqual(['chunk', 'truncated']);
  });
});
