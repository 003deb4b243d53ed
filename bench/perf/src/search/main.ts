/**
 * Task search latency (`GET /v1/tasks`, the router's TaskSearch) at scale: 100,000 tasks in Redis
 * (four task shards, their index entries and hashes as the claim call and the acks leave them)
 * and 1,000,000 archived tasks in InfluxDB over 30 days (the `task_archive` points registry-sync
 * writes). Prints p50/p95 of one page for each query shape, with what answered. Starts its own
 * Redis and InfluxDB (or uses REDIS_URL / INFLUX_URL), and drops what it wrote.
 *
 *   npm run bench:search -w @agent-reach/bench -- [--redis=100000] [--archive=1000000] [--reps=15]
 */
import { archivedTaskToLine } from '@agent-reach/events';
import { reachKeys, type TaskSearchQuery } from '@agent-reach/protocol';
import { createRedis } from '@agent-reach/service-kit/redis';
import { RedisTaskSearch, TaskSearch, TenantScope } from '@agent-reach/router';
import { startServices } from '@agent-reach/testkit';

const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const IN_REDIS = arg('redis', 100_000);
const ARCHIVED = arg('archive', 1_000_000);
const REPS = arg('reps', 15);
const DAY = 86_400_000;
const CAPABILITIES = 10;
const AGENTS = 50;
const TENANTS = ['default', 'acme', 'globex', 'initech'];

const capabilityOf = (i: number) => `cap-${i % CAPABILITIES}`;
const agentOf = (i: number) => `agent-${(i * 7) % AGENTS}`;
const tenantOf = (i: number) => TENANTS[i % TENANTS.length] as string;
/** 1 in 20 dead (MODEL_NOT_LOADED on one agent in ten), the rest completed. */
const deadOf = (i: number) => i % 20 === 0;
const durationOf = (i: number) => 50 + ((i * 7919) % 20_000);
const idOf = (tenant: string, id: string) => (tenant === 'default' ? id : `${tenant}/${id}`);

async function fillRedis(redisUrl: string, prefix: string, now: number): Promise<void> {
  const redis = createRedis({ url: redisUrl });
  const keys = reachKeys(prefix, { taskShards: () => 4 });
  for (let i = 0; i < IN_REDIS; i += 1000) {
    const pipe = redis.pipeline();
    for (let j = i; j < Math.min(IN_REDIS, i + 1000); j++) {
      const id = idOf(tenantOf(j), `r-${j}`);
      const created = now - DAY + Math.floor((j / IN_REDIS) * (DAY - 60_000));
      const ended = String(created + durationOf(j));
      const dead = deadOf(j);
      pipe.zadd(keys.taskIndex(keys.taskShardOf(id)), created, id);
      pipe.hset(keys.task(id), {
        status: dead ? 'dead' : 'completed',
        capability: capabilityOf(j),
        agent_id: agentOf(j),
        attempt: dead ? '3' : '1',
        created_at: String(created),
        ...(dead ? { dead_at: ended, tl: '1' } : { completed_at: ended }),
      });
      if (dead) {
        const code = j % 200 === 0 ? 'MODEL_NOT_LOADED' : 'HANDLER_ERROR';
        pipe.rpush(
          keys.timeline(id),
          JSON.stringify({
            stage: 'failed',
            at: Number(ended),
            agent_id: agentOf(j),
            error_code: code,
          }),
        );
      }
    }
    await pipe.exec();
  }
  await redis.quit();
}

async function fillArchive(influxUrl: string, db: string, now: number): Promise<number> {
  const t0 = performance.now();
  const batch = 10_000;
  for (let i = 0; i < ARCHIVED; i += batch) {
    const lines: string[] = [];
    for (let j = i; j < Math.min(ARCHIVED, i + batch); j++) {
      const tenant = tenantOf(j);
      const created = now - 30 * DAY + Math.floor((j / ARCHIVED) * 29 * DAY);
      const dead = deadOf(j);
      lines.push(
        archivedTaskToLine({
          tenant: tenant === 'default' ? '' : tenant,
          capability: capabilityOf(j),
          agent_id: agentOf(j),
          status: dead ? 'dead' : 'completed',
          task_id: idOf(tenant, `a-${j}`),
          attempts: dead ? 3 : 1,
          created_at_ms: created,
          ended_at_ms: created + durationOf(j),
          duration_ms: durationOf(j),
          error_code: dead ? (j % 200 === 0 ? 'MODEL_NOT_LOADED' : 'HANDLER_ERROR') : '',
          parent_task_id: '',
          record: '{}',
          payload_cut: false,
          result_cut: false,
        }),
      );
    }
    const res = await fetch(`${influxUrl}/write?db=${db}&precision=ns`, {
      method: 'POST',
      body: lines.join('\n'),
    });
    if (res.status !== 204) throw new Error(`InfluxDB write: ${res.status} ${await res.text()}`);
  }
  return (performance.now() - t0) / 1000;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function main(): Promise<void> {
  const services = await startServices();
  const prefix = `srchbench${process.pid}`;
  const db = `${prefix}db`;
  const now = Date.now();
  const influxQuery = (q: string) =>
    fetch(`${services.influxUrl}/query?q=${encodeURIComponent(q)}`, { method: 'POST' });
  await influxQuery(`CREATE DATABASE "${db}"`);
  try {
    let t0 = performance.now();
    await fillRedis(services.redisUrl, prefix, now);
    const redisS = (performance.now() - t0) / 1000;
    const archiveS = await fillArchive(services.influxUrl, db, now);
    process.stdout.write(
      `search bench: ${IN_REDIS} tasks in Redis (filled in ${redisS.toFixed(1)} s), ` +
        `${ARCHIVED} in InfluxDB over 30 days (written in ${archiveS.toFixed(1)} s, ` +
        `${Math.round(ARCHIVED / archiveS)} points/s)\n`,
    );
    const redis = createRedis({ url: services.redisUrl });
    const keys = reachKeys(prefix, { taskShards: () => 4 });
    const search = new TaskSearch({
      redis: new RedisTaskSearch({ redis, keys, scanMax: () => 20_000 }),
      influx: { url: services.influxUrl, db, timeoutMs: 30_000 },
      retentionS: () => 86_400,
      archiveMax: () => 10_000,
    });
    const operator = new TenantScope('default', true);
    const acme = new TenantScope('acme', false);
    const shapes: [string, TaskSearchQuery, TenantScope][] = [
      ['redis: newest 100, no filter', {}, operator],
      ['redis: tenant + capability', { capability: 'cap-3' }, acme],
      ['redis: dead, one capability', { status: 'dead', capability: 'cap-0' }, operator],
      [
        'redis: agent + error_code (1 in 200)',
        { agent_id: 'agent-0', error_code: 'MODEL_NOT_LOADED' },
        operator,
      ],
      ['redis: slower than 19 s', { min_duration_ms: 19_000 }, operator],
      ['both: 7 days, tenant + capability', { since: '7d', capability: 'cap-3' }, acme],
      [
        'both: 30 days, dead + capability',
        { since: '30d', status: 'dead', capability: 'cap-0' },
        operator,
      ],
      [
        'both: 30 days, agent + error_code',
        { since: '30d', agent_id: 'agent-0', error_code: 'MODEL_NOT_LOADED' },
        operator,
      ],
      ['both: 30 days, slower than 19.9 s', { since: '30d', min_duration_ms: 19_900 }, operator],
      [
        'archive: 30 to 2 days ago, dead + capability',
        { since: '30d', until: '2d', status: 'dead', capability: 'cap-0' },
        operator,
      ],
      ['archive: 30 to 2 days ago, tenant', { since: '30d', until: '2d' }, acme],
      [
        'archive: 30 to 2 days ago, slower than 19.9 s',
        { since: '30d', until: '2d', min_duration_ms: 19_900 },
        operator,
      ],
    ];
    for (const [name, q, scope] of shapes) {
      const times: number[] = [];
      let items = 0;
      let source = '';
      let more = false;
      for (let r = 0; r < REPS + 2; r++) {
        t0 = performance.now();
        const page = await search.search(q, scope);
        const took = performance.now() - t0;
        if (r >= 2) times.push(took);
        items = page.items.length;
        source = page.source;
        more = page.next_cursor !== null;
      }
      times.sort((a, b) => a - b);
      process.stdout.write(
        `  ${name.padEnd(48)} p50 ${quantile(times, 0.5).toFixed(1).padStart(7)} ms  ` +
          `p95 ${quantile(times, 0.95).toFixed(1).padStart(7)} ms  ${String(items).padStart(3)} items` +
          `${more ? ' +cursor' : ''}  (${source})\n`,
      );
    }
    let cursor: string | null = null;
    for (;;) {
      const out: [string, string[]] = await redis.scan(
        cursor ?? '0',
        'MATCH',
        `${prefix}:*`,
        'COUNT',
        5000,
      );
      if (out[1].length > 0) await redis.unlink(...out[1]);
      cursor = out[0];
      if (cursor === '0') break;
    }
    await redis.quit();
  } finally {
    await influxQuery(`DROP DATABASE "${db}"`);
    await services.stop();
  }
}

await main();
