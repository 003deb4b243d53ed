/**
 * REACH_SHARDS: the acks stream and the due set split into hash-tagged shards, so a Redis
 * Cluster has no single hot slot. Registry-sync tells each agent its shard of the acks stream
 * at registration (`acks_stream`) and reads every shard; a router takes the shard count
 * registry-sync publishes. Workers that speak only Redis, as docs/PROTOCOL.md says, complete
 * tasks and have failures retried on every shard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { encodeAck, reachKeys, shardOf, WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';

const SHARDS = 3;
const silent = pino({ level: 'silent' });
let prefix: string;
let keys: ReachKeys;
let redis: Redis;
let sync: RegistryService;
let router: RouterService;

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix, { shards: () => SHARDS });
  redis = new Redis(testServices().redisUrl);
  const url = testServices().redisUrl;
  sync = await createRegistryService(
    { redisUrl: url, prefix, shards: SHARDS, sweepIntervalMs: 50, retryBaseMs: 50 },
    { logger: silent },
  );
  // The router is not told: it takes the count registry-sync publishes.
  router = await createRouterService({ redisUrl: url, prefix }, { logger: silent });
});

afterAll(async () => {
  await router?.close();
  await sync?.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

interface Registered {
  agentId: string;
  epoch: number;
  stream: string;
  acks: string;
}

type ReadReply = [string, [string, string[]][]][] | null;

/** One pass of a raw worker: read what is there, fail the tasks `fail` names, complete the rest. */
async function work(a: Registered, fail: Set<string>): Promise<number> {
  const read = (await redis.call(
    'XREADGROUP',
    'GROUP',
    WORKER_GROUP,
    `${a.agentId}-i`,
    'COUNT',
    '10',
    'STREAMS',
    a.stream,
    '>',
  )) as ReadReply;
  const entries = read?.[0]?.[1] ?? [];
  for (const [entryId, flat] of entries) {
    const f = Object.fromEntries(
      flat.flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1] as string]] : [])),
    ) as Record<string, string>;
    const common = {
      task_id: f.task_id as string,
      agent_id: a.agentId,
      instance_id: `${a.agentId}-i`,
      epoch: a.epoch,
      attempt: Number(f.attempt),
    };
    await redis.xadd(a.acks, '*', ...encodeAck({ ...common, stage: 'received' }));
    const failing = fail.delete(common.task_id);
    await redis.xadd(
      a.acks,
      '*',
      ...encodeAck(
        failing
          ? { ...common, stage: 'failed', error: 'once', retryable: true, duration_ms: 1 }
          : { ...common, stage: 'completed', result: f.payload ?? 'null', duration_ms: 1 },
      ),
    );
    await redis.xack(a.stream, WORKER_GROUP, entryId);
  }
  return entries.length;
}

describe('with three shards', () => {
  it('gives agents acks streams by shard, reads them all, and completes and retries tasks on each', async () => {
    const agents: Registered[] = [];
    for (let i = 0; i < 6; i++) {
      const agentId = `shard-agent-${i}`;
      const res = await sync.app.inject({
        method: 'POST',
        url: '/v1/agents/register',
        payload: {
          agent_id: agentId,
          instance_id: `${agentId}-i`,
          capabilities: [`cap-${i}`],
          max_concurrency: 10,
        },
      });
      expect(res.statusCode).toBe(200);
      const body = res.json<{ epoch: number; stream: string; acks_stream: string }>();
      expect(body.acks_stream).toBe(keys.acks(shardOf(agentId, SHARDS)));
      agents.push({ agentId, epoch: body.epoch, stream: body.stream, acks: body.acks_stream });
    }
    // The six agents use more than one shard (shard 0 is the single-shard acks stream).
    expect(new Set(agents.map((a) => a.acks)).size).toBeGreaterThan(1);
    await waitFor(async () => router.settings.shards === SHARDS, {
      message: 'the router took the published shard count',
    });
    await sync.housekeeper.writeSnapshotNow();
    await router.snapshot.reload();

    const tasks: string[] = [];
    const fail = new Set<string>();
    for (const [i] of agents.entries()) {
      for (let n = 0; n < 3; n++) {
        const res = await router.app.inject({
          method: 'POST',
          url: '/v1/tasks',
          payload: { capability: `cap-${i}`, payload: { i, n }, callback_topic: 'shards' },
        });
        expect(res.statusCode, res.body).toBe(202);
        const taskId = res.json<{ task_id: string }>().task_id;
        tasks.push(taskId);
        // One task of each agent fails once and is retried by the due set's shard it lands in.
        if (n === 0) fail.add(taskId);
      }
    }
    expect(new Set(tasks.map((t) => keys.dueOf(t))).size).toBeGreaterThan(1);
    const status = async (id: string) =>
      (await router.app.inject({ url: `/v1/tasks/${id}` })).json<{
        status: string;
        attempts: number;
        timeline: { stage: string }[];
      }>();
    await waitFor(
      async () => {
        for (const a of agents) await work(a, fail);
        const views = await Promise.all(tasks.map(status));
        return views.every((v) => v.status === 'completed');
      },
      { timeoutMs: 15_000, message: 'every task completed' },
    );
    for (const [i, id] of tasks.entries()) {
      const view = await status(id);
      expect(view.attempts).toBe(i % 3 === 0 ? 2 : 1);
      if (i % 3 === 0) expect(view.timeline.map((e) => e.stage)).toContain('retried');
    }
    // Every shard of the acks stream was read to its end (applied acks are deleted within
    // 100 ms), and the due set holds nothing more.
    await waitFor(
      async () => {
        for (let shard = 0; shard < SHARDS; shard++) {
          if ((await redis.xlen(keys.acks(shard))) > 0) return false;
          if ((await redis.zcard(keys.due(shard))) > 0) return false;
        }
        return true;
      },
      { timeoutMs: 2_000, message: 'every acks shard read to its end, the due set empty' },
    );
    const published = await redis.xrange(keys.callback('shards'), '-', '+');
    expect(published).toHaveLength(tasks.length);
  });
});
