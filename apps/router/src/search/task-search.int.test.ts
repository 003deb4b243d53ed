/**
 * Task search on a real Redis and a real InfluxDB: tasks spread over three task shards, some
 * still in Redis, some only in the archive (their Redis state expired, their index entries left
 * behind), some in both; read back a small page at a time with a small scan budget, every
 * matching task comes once, newest first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archivedTaskToLine } from '@agent-reach/events';
import { reachKeys, type TaskSearchQuery } from '@agent-reach/protocol';
import { createRedis, type RedisClient } from '@agent-reach/service-kit/redis';
import { testServices } from '@agent-reach/testkit';
import { TenantScope } from '../tasks/tenant-scope.ts';
import { RedisTaskSearch } from './redis-search.ts';
import { TaskSearch } from './task-search.ts';

const prefix = `srch${Date.now().toString(36)}`;
const keys = reachKeys(prefix, { taskShards: () => 3 });
const RETENTION_S = 60;
const now = Date.now();
const db = `${prefix}db`;
let redis: RedisClient;
let search: TaskSearch;

interface Made {
  id: string;
  at: number;
  capability: string;
  status: string;
  where: 'redis' | 'archive' | 'both';
}
const made: Made[] = [];

beforeAll(async () => {
  const { redisUrl, influxUrl } = testServices();
  redis = createRedis({ url: redisUrl });
  await fetch(`${influxUrl}/query?q=${encodeURIComponent(`CREATE DATABASE "${db}"`)}`, {
    method: 'POST',
  });
  const lines: string[] = [];
  // 400 tasks, many sharing a millisecond; the older half only archived, the newest 50 only in
  // Redis (not archived yet), the rest in both.
  for (let i = 0; i < 400; i++) {
    const at = now - 10 * 60_000 + Math.floor(i / 4) * 1000;
    const id = i % 5 === 0 ? `acme/t-${i}` : `t-${i}`;
    const capability = i % 3 === 0 ? 'dead-end' : 'echo';
    const status = capability === 'dead-end' ? 'dead' : 'completed';
    const where = i < 200 ? 'archive' : i >= 350 ? 'redis' : 'both';
    made.push({ id, at, capability, status, where });
    const shard = keys.taskShardOf(id);
    await redis.zadd(keys.taskIndex(shard), at, id);
    if (where !== 'archive') {
      await redis.hset(keys.task(id), {
        status,
        capability,
        agent_id: 'a1',
        attempt: '1',
        created_at: String(at),
        ...(status === 'dead' ? { dead_at: String(at + 500) } : { completed_at: String(at + 500) }),
      });
    }
    if (where !== 'redis') {
      lines.push(
        archivedTaskToLine({
          tenant: id.startsWith('acme/') ? 'acme' : '',
          capability,
          agent_id: 'a1',
          status,
          task_id: id,
          attempts: 1,
          created_at_ms: at,
          ended_at_ms: at + 500,
          duration_ms: 500,
          error_code: '',
          parent_task_id: '',
          record: '{}',
          payload_cut: false,
          result_cut: false,
        }),
      );
    }
  }
  const res = await fetch(`${influxUrl}/write?db=${db}&precision=ns`, {
    method: 'POST',
    body: lines.join('\n'),
  });
  expect(res.status).toBe(204);
  search = new TaskSearch({
    redis: new RedisTaskSearch({ redis, keys, scanMax: () => 300 }),
    influx: { url: influxUrl, db },
    retentionS: () => RETENTION_S,
    archiveMax: () => 100,
  });
});

afterAll(async () => {
  const { influxUrl } = testServices();
  await fetch(`${influxUrl}/query?q=${encodeURIComponent(`DROP DATABASE "${db}"`)}`, {
    method: 'POST',
  });
  for (let s = 0; s < 3; s++) await redis.del(keys.taskIndex(s));
  for (const m of made) await redis.del(keys.task(m.id));
  await redis.quit();
});

async function all(q: TaskSearchQuery, scope: TenantScope) {
  const out: { task_id: string; created_at: number; archived?: boolean }[] = [];
  const sources = new Set<string>();
  let cursor: string | null = null;
  for (let i = 0; i < 500; i++) {
    const page = await search.search({ ...q, ...(cursor ? { cursor } : {}) }, scope, now);
    out.push(...page.items);
    sources.add(page.source);
    cursor = page.next_cursor;
    if (cursor === null) break;
  }
  return { out, sources };
}

describe('task search over Redis and the archive', () => {
  const operator = new TenantScope('default', true);

  it('finds every matching task once, newest first, in small pages', async () => {
    const { out, sources } = await all(
      { since: String(now - 3_600_000), capability: 'echo', limit: 7 },
      operator,
    );
    expect(sources).toEqual(new Set(['redis+influxdb']));
    const want = made.filter((m) => m.capability === 'echo');
    expect(out.map((t) => t.task_id).sort()).toEqual(
      want.map((m) => (m.id.startsWith('acme/') ? m.id : m.id)).sort(),
    );
    const order = out.map((t) => t.created_at);
    expect(order).toEqual([...order].sort((a, b) => b - a));
    const archivedOnly = new Set(made.filter((m) => m.where === 'archive').map((m) => m.id));
    expect(out.filter((t) => t.archived).every((t) => archivedOnly.has(t.task_id))).toBe(true);
  });

  it('keeps a tenant to its own, from both stores', async () => {
    const { out } = await all(
      { since: String(now - 3_600_000), status: 'dead', limit: 5 },
      new TenantScope('acme', false),
    );
    expect(out.map((t) => t.task_id).sort()).toEqual(
      made
        .filter((m) => m.id.startsWith('acme/') && m.status === 'dead')
        .map((m) => m.id.slice(5))
        .sort(),
    );
  });
});
