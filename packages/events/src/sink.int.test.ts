import { freePort, waitFor } from '@agent-reach/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiForVersion,
  ensureDatabase,
  isInfluxQueryError,
  queryInfluxQL,
  quoteIdentifier,
} from './influxql.ts';
import { eventToLine } from './line.ts';
import { createEventSink } from './sink.ts';
import { influxForTests, randomId } from './testing/influx-for-tests.ts';
import { MEASUREMENT, type EventSink, type EventSinkOptions, type TaskEvent } from './types.ts';

const influx = influxForTests();
const db = randomId('events_it'); // this file's own database, dropped at the end
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  await ensureDatabase(influx.url, db); // the v2 path writes to a bucket that must exist
});
afterAll(async () => {
  await queryInfluxQL(influx.url, '', `DROP DATABASE ${quoteIdentifier(db)}`);
});

function sinkFor(opts: EventSinkOptions): EventSink {
  return createEventSink({ bucket: db, flushIntervalMs: 60_000, logger: silent, ...opts });
}

function rowsOf(taskId: string): Promise<Array<Record<string, unknown>>> {
  return queryInfluxQL(influx.url, db, `SELECT * FROM ${MEASUREMENT} WHERE task_id = '${taskId}'`);
}

function stagesOf(taskId: string, at: number): TaskEvent[] {
  const common = { capability: 'echo', agent_id: 'agent-it', task_id: taskId, attempt: 1 };
  return [
    { ...common, stage: 'sent', at, trace_id: 'trace-1' },
    { ...common, stage: 'received', at: at + 5, latency_ms: 5 },
    { ...common, stage: 'completed', at: at + 12, latency_ms: 12, duration_ms: 6.5 },
    { ...common, stage: 'failed', at: at + 20, attempt: 2, reason: 'handler threw "boom", twice' },
  ];
}

async function pingVersion(url: string): Promise<string | null> {
  const res = await fetch(`${url}/ping`);
  await res.arrayBuffer();
  return res.headers.get('x-influxdb-version');
}

describe('event sink on a real InfluxDB', () => {
  it('v1: every stage lands with stage/capability/agent_id as tags and task_id as a string field', async () => {
    const taskId = randomId('t');
    const at = Date.now() - 60_000;
    const sink = sinkFor({ url: influx.url, api: 'v1' });
    for (const e of stagesOf(taskId, at)) sink.write(e);
    await sink.flush();
    expect(sink.stats()).toMatchObject({ api: 'v1', written: 4, dropped: 0, buffered: 0 });
    await sink.close();

    const rows = await waitFor(async () => {
      const r = await rowsOf(taskId);
      return r.length === 4 && r;
    });
    expect(rows).toEqual([
      expect.objectContaining({
        time: at,
        stage: 'sent',
        capability: 'echo',
        agent_id: 'agent-it',
        task_id: taskId,
        attempt: 1,
        trace_id: 'trace-1',
        latency_ms: null,
      }),
      expect.objectContaining({
        time: at + 5,
        stage: 'received',
        latency_ms: 5,
        duration_ms: null,
      }),
      expect.objectContaining({
        time: at + 12,
        stage: 'completed',
        latency_ms: 12,
        duration_ms: 6.5,
      }),
      expect.objectContaining({
        time: at + 20,
        stage: 'failed',
        attempt: 2,
        reason: 'handler threw "boom", twice',
      }),
    ]);

    const tagKeys = await queryInfluxQL(influx.url, db, `SHOW TAG KEYS FROM ${MEASUREMENT}`);
    expect(tagKeys.map((r) => r.tagKey).sort()).toEqual(['agent_id', 'capability', 'stage']);
    const fieldKeys = await queryInfluxQL(influx.url, db, `SHOW FIELD KEYS FROM ${MEASUREMENT}`);
    expect(Object.fromEntries(fieldKeys.map((r) => [r.fieldKey, r.fieldType]))).toEqual({
      attempt: 'integer',
      duration_ms: 'float',
      latency_ms: 'float',
      reason: 'string',
      task_id: 'string',
      trace_id: 'string',
    });
  });

  it('v2: points go through /api/v2/write and come back', async () => {
    const taskId = randomId('t');
    const at = Date.now() - 50_000;
    const sink = sinkFor({ url: influx.v2Url, api: 'v2', token: 'unused-by-1.x', org: 'reach' });
    for (const e of stagesOf(taskId, at)) sink.write(e);
    await sink.flush();
    expect(sink.stats()).toMatchObject({
      api: 'v2',
      written: 4,
      dropped: 0,
      failedWrites: 0,
      buffered: 0,
    });
    await sink.close();
    const rows = await waitFor(async () => {
      const r = await rowsOf(taskId);
      return r.length === 4 && r;
    });
    expect(rows.map((r) => [r.time, r.stage, r.task_id])).toEqual([
      [at, 'sent', taskId],
      [at + 5, 'received', taskId],
      [at + 12, 'completed', taskId],
      [at + 20, 'failed', taskId],
    ]);
  });

  it('auto: picks the API the server version calls for (v1 on 1.6.7) and writes', async () => {
    const version = await pingVersion(influx.url);
    const expected = apiForVersion(version);
    if (version?.startsWith('1.6')) expect(expected).toBe('v1');
    const taskId = randomId('t');
    const sink = sinkFor({ url: influx.url, api: 'auto' });
    expect(sink.stats().api).toBe('none'); // detection happens on the first flush
    sink.write(stagesOf(taskId, Date.now() - 40_000)[0]!);
    await sink.flush();
    expect(sink.stats()).toMatchObject({ api: expected, written: 1 });
    await sink.close();
    await waitFor(async () => (await rowsOf(taskId)).length === 1);
  });

  it.each(['v1', 'v2'] as const)('%s: close() flushes what is buffered', async (api) => {
    const taskId = randomId('t');
    const sink = sinkFor({ url: api === 'v1' ? influx.url : influx.v2Url, api, batchSize: 7 });
    const at = Date.now() - 30_000;
    for (let i = 0; i < 50; i++) sink.write({ ...stagesOf(taskId, at)[0]!, at: at + i });
    await sink.close();
    expect(sink.stats()).toMatchObject({ written: 50, dropped: 0, buffered: 0 });
    await waitFor(async () => (await rowsOf(taskId)).length === 50);
  });

  it.each(['v1', 'v2', 'auto'] as const)(
    '%s outage: write() stays fast, drops are counted, close() is bounded',
    async (api) => {
      const url = `http://127.0.0.1:${await freePort()}`; // nothing listens there
      const sink = sinkFor({
        url,
        api,
        flushIntervalMs: 20,
        maxBufferPoints: 1000,
        requestTimeoutMs: 300,
        closeTimeoutMs: 1000,
      });
      const events = Array.from({ length: 10_000 }, (_, i) => stagesOf(`t${i}`, Date.now())[0]!);
      // Anchor from the same run: building the lines, the work write() leaves to the timer.
      events.slice(0, 1000).forEach((e) => eventToLine(e));
      const a0 = performance.now();
      for (const e of events) eventToLine(e);
      const anchorMs = performance.now() - a0;

      // Fail once for real first (ping / CREATE DATABASE / write refused), so the loop below runs
      // against a sink that is in the middle of an outage; its 20 ms timer keeps trying meanwhile.
      for (const e of events.slice(0, 10)) sink.write(e);
      await sink.flush();
      if (api === 'v2') expect(sink.stats().failedWrites).toBeGreaterThanOrEqual(1);
      const t0 = performance.now();
      for (const e of events) sink.write(e);
      const writeMs = performance.now() - t0;
      expect(sink.write(events[0]!)).toBeUndefined(); // synchronous: nothing to await
      expect(writeMs).toBeLessThan(anchorMs * 2 + 25);

      const during = sink.stats();
      expect(during.dropped).toBeGreaterThanOrEqual(9000);
      expect(during.buffered).toBeLessThanOrEqual(2000); // ours + (v2) the client's retry buffer
      expect(during.written).toBe(0);

      const c0 = Date.now();
      await sink.close();
      expect(Date.now() - c0).toBeLessThan(1000 + 500);
      expect(sink.stats()).toMatchObject({ written: 0, dropped: 10_011, buffered: 0 });
    },
  );
});

describe('queryInfluxQL', () => {
  it('throws InfluxQueryError for a syntax error, an unknown database and an unreachable server', async () => {
    const errors = await Promise.all([
      queryInfluxQL(influx.url, db, 'SELEC nonsense').catch((e: unknown) => e),
      queryInfluxQL(influx.url, randomId('nodb'), `SELECT * FROM ${MEASUREMENT}`).catch(
        (e: unknown) => e,
      ),
      queryInfluxQL(`http://127.0.0.1:${await freePort()}`, db, 'SHOW DATABASES', {
        timeoutMs: 500,
      }).catch((e: unknown) => e),
    ]);
    expect(errors.every(isInfluxQueryError)).toBe(true);
    const [syntax, missing, down] = errors as Array<{
      message: string;
      status?: number;
      retryable: boolean;
    }>;
    expect(syntax).toMatchObject({ status: 400, retryable: false });
    expect(syntax?.message).toMatch(/error parsing query/);
    expect(missing?.message).toMatch(/database not found/);
    expect(down).toMatchObject({ status: undefined, retryable: true });
  });

  it('returns time as epoch ms and flattens every series', async () => {
    const rows = await queryInfluxQL(influx.url, '', 'SHOW DATABASES');
    expect(rows.map((r) => r.name)).toContain(db);
  });
});
