/**
 * The archive outbox to InfluxDB, on a real Redis and a real InfluxDB: a task made final with
 * archiving on waits in its shard's outbox, unexpired; a pass writes its point, sets its expiry
 * and tombstone and deletes the entry; while InfluxDB is away the entry and the record stay.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { defineDispatchCommands, rejectScript } from '@agent-reach/dispatch';
import {
  decodeArchivedTaskRow,
  ensureDatabase,
  queryInfluxQL,
  quoteIdentifier,
} from '@agent-reach/events';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { archiveDoneScript } from '../commands/archive-done.ts';
import {
  DAY_MS,
  registerArchiveMetrics,
  TaskArchiver,
  type ArchiveTarget,
} from './task-archiver.ts';

const silent = pino({ level: 'silent' });
const db = `archive_it_${Date.now().toString(36)}`;
let redis: Redis;
let keys: ReachKeys;

const settings = {
  archiveBatch: 100,
  archiveTombstoneDays: 30,
  taskRetentionS: 3600,
  dlqRetentionS: 7200,
  archivePayloads: true,
  archivePayloadsByCapability: { secret: false },
  archiveMaxValueBytes: 64,
};

function archiver(target: ArchiveTarget | undefined): TaskArchiver {
  return new TaskArchiver({ redis, keys, target, settings, logger: silent });
}

const influx = (): ArchiveTarget => ({ url: testServices().influxUrl, db });

/** A task dead on arrival, made final with archiving on (reject-3.lua). */
async function deadTask(taskId: string, capability: string, payload: string): Promise<void> {
  await rejectScript.run(redis, {
    keys: {
      task: keys.task(taskId),
      timeline: keys.timeline(taskId),
      outbox: keys.archiveOutbox(keys.taskShardOf(taskId)),
    },
    args: {
      taskId,
      capability,
      payload,
      callbackTopic: '',
      traceId: '',
      reason: 'loop',
      retentionS: 60,
      archive: '1',
    },
    items: [],
  });
}

async function archivedRow(taskId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await queryInfluxQL(
    testServices().influxUrl,
    db,
    `SELECT * FROM task_archive WHERE task_id = '${taskId}'`,
  );
  return rows[0];
}

beforeAll(async () => {
  keys = reachKeys(randomPrefix(), { taskShards: () => 2 });
  redis = new Redis(testServices().redisUrl);
  defineDispatchCommands(redis, ['reject']);
  loadScripts(redis, [archiveDoneScript]);
  await ensureDatabase(testServices().influxUrl, db);
});

afterAll(async () => {
  await queryInfluxQL(testServices().influxUrl, '', `DROP DATABASE ${quoteIdentifier(db)}`);
  await redis?.quit();
});

describe('TaskArchiver', () => {
  it('keeps a final task unexpired in its outbox until InfluxDB took it, then sets expiry and tombstone', async () => {
    const taskId = 'acme/arch-1';
    await deadTask(taskId, 'echo', JSON.stringify({ text: 'x'.repeat(100) }));
    const outbox = keys.archiveOutbox(keys.taskShardOf(taskId));
    expect(await redis.xlen(outbox)).toBe(1);
    expect(await redis.ttl(keys.task(taskId))).toBe(-1);

    // InfluxDB away: nothing written, nothing lost.
    const away = await archiver({ url: 'http://127.0.0.1:9', db, timeoutMs: 500 }).pass();
    expect(away).toMatchObject({ archived: 0, blocked: true });
    expect(await redis.xlen(outbox)).toBe(1);
    expect(await redis.ttl(keys.task(taskId))).toBe(-1);

    const pass = await archiver(influx()).pass();
    expect(pass).toMatchObject({ archived: 1, failed: 0, blocked: false });
    expect(await redis.xlen(outbox)).toBe(0);
    const ttl = await redis.ttl(keys.task(taskId));
    expect(ttl).toBeGreaterThan(7000);
    expect(ttl).toBeLessThanOrEqual(7200);
    const row = await archivedRow(taskId);
    const point = decodeArchivedTaskRow(row ?? {});
    expect(point).toMatchObject({
      tenant: 'acme',
      capability: 'echo',
      status: 'dead',
      task_id: taskId,
      attempts: 0,
      payload_cut: true,
      result_cut: false,
    });
    const record = JSON.parse(point?.record ?? '{}') as Record<string, unknown>;
    expect(record).toMatchObject({ task_id: 'arch-1', status: 'dead', dead_reason: 'loop' });
    expect(record.payload).toBe(JSON.stringify({ text: 'x'.repeat(100) }).slice(0, 64));
    expect(record.payload_cut).toBe(true);
    const day = Math.floor((point?.ended_at_ms ?? 0) / DAY_MS);
    expect(await redis.hget(keys.archiveTombstones(keys.taskShardOf(taskId), day), taskId)).toBe(
      String(point?.ended_at_ms),
    );
  });

  it('leaves a capability’s payloads out when it turned archiving them off, and keeps short ones whole', async () => {
    await deadTask('arch-secret', 'secret', '{"card":"4111"}');
    await deadTask('arch-open', 'echo', '{"n":1}');
    expect((await archiver(influx()).pass()).archived).toBe(2);
    const secret = JSON.parse(
      decodeArchivedTaskRow((await archivedRow('arch-secret')) ?? {})?.record ?? '{}',
    ) as Record<string, unknown>;
    expect(secret).not.toHaveProperty('payload');
    expect(secret.capability).toBe('secret');
    const open = JSON.parse(
      decodeArchivedTaskRow((await archivedRow('arch-open')) ?? {})?.record ?? '{}',
    ) as Record<string, unknown>;
    expect(open.payload).toEqual({ n: 1 });
    expect(open).not.toHaveProperty('payload_cut');
  });

  it('without InfluxDB finishes entries (expiry set) with no tombstone, and reports the depth', async () => {
    await deadTask('arch-none', 'echo', '1');
    const registry = new Registry();
    const a = archiver(undefined);
    registerArchiveMetrics(registry, a);
    expect(await a.depth()).toBe(1);
    expect(await registry.getSingleMetricAsString('reach_archive_outbox_depth')).toContain(
      'reach_archive_outbox_depth 1',
    );
    expect(await a.pass()).toMatchObject({ archived: 0, blocked: false });
    expect(await a.depth()).toBe(0);
    expect(await redis.ttl(keys.task('arch-none'))).toBeGreaterThan(0);
  });
});
