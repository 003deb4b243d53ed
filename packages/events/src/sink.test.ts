import { waitFor } from '@agent-reach/testkit';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createEventSink } from './sink.ts';
import { defaultReply, startFakeInflux, type FakeInflux } from './testing/fake-influx.ts';
import type { EventSink, EventSinkOptions, TaskEvent } from './types.ts';

// Failure modes a real InfluxDB will not produce on demand (503, 400, hangs), against a local
// HTTP server. The real InfluxDB is exercised in sink.int.test.ts.

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

const ev = (i: number, patch: Partial<TaskEvent> = {}): TaskEvent => ({
  stage: 'sent',
  capability: 'echo',
  agent_id: 'a1',
  task_id: `t${i}`,
  attempt: 1,
  at: 1_700_000_000_000 + i,
  ...patch,
});

let fake: FakeInflux | undefined;
let sink: EventSink | undefined;
afterEach(async () => {
  await sink?.close();
  await fake?.close();
  sink = undefined;
  fake = undefined;
});

function open(f: FakeInflux, opts: EventSinkOptions = {}): EventSink {
  sink = createEventSink({
    url: f.url,
    api: 'v1',
    flushIntervalMs: 60_000, // tests drive flush() themselves
    retryBaseDelayMs: 10,
    logger: pino({ level: 'silent' }),
    ...opts,
  });
  return sink;
}

function accounted(s: EventSink, accepted: number): void {
  const st = s.stats();
  expect(st.written + st.dropped + st.buffered).toBe(accepted);
}

describe('createEventSink', () => {
  it('is a no-op without a URL', async () => {
    const s = createEventSink({});
    s.write(ev(1));
    await s.flush();
    await s.close();
    expect(s.stats()).toEqual({
      written: 0,
      dropped: 0,
      failedWrites: 0,
      buffered: 0,
      api: 'none',
    });
  });

  it('v1: creates the database, then posts batches at ns precision, one request at a time', async () => {
    fake = await startFakeInflux(undefined, 20);
    const s = open(fake, { batchSize: 3, bucket: 'db one' });
    for (let i = 0; i < 8; i++) s.write(ev(i));
    await s.flush();
    expect(fake.requests[0]?.path).toBe('/query');
    expect(new URLSearchParams(fake.requests[0]?.body).get('q')).toBe('CREATE DATABASE "db one"');
    const writes = fake.writes();
    expect(writes.map((w) => w.body.split('\n').length)).toEqual([3, 3, 2]);
    expect(writes[0]?.query.get('db')).toBe('db one');
    expect(writes[0]?.query.get('precision')).toBe('ns');
    expect(writes[0]?.body.split('\n')[0]).toMatch(/ 1700000000000\d{6}$/);
    expect(fake.maxInFlight).toBe(1);
    expect(s.stats()).toEqual({ written: 8, dropped: 0, failedWrites: 0, buffered: 0, api: 'v1' });
  });

  it('v1: retries a batch after 5xx with backoff, then writes it', async () => {
    fake = await startFakeInflux((req, seen) => {
      const failing = seen.filter((r) => r.path === '/write').length <= 2;
      return req.path === '/write' && failing ? { status: 503 } : defaultReply(req);
    });
    const s = open(fake);
    for (let i = 0; i < 5; i++) s.write(ev(i));
    await waitFor(async () => (await s.flush(), s.stats().written === 5), { timeoutMs: 5000 });
    expect(s.stats()).toMatchObject({ written: 5, dropped: 0, failedWrites: 2, buffered: 0 });
    expect(fake.writes().every((w) => w.body === fake?.writes()[0]?.body)).toBe(true);
  });

  it('v1: drops a batch once its retries are exhausted, counted and logged rate-limited', async () => {
    fake = await startFakeInflux((req) =>
      req.path === '/write' ? { status: 503 } : defaultReply(req),
    );
    const { logger, lines } = capture();
    const s = open(fake, { maxRetries: 2, logger });
    for (let i = 0; i < 4; i++) s.write(ev(i));
    await waitFor(async () => (await s.flush(), s.stats().dropped === 4), { timeoutMs: 5000 });
    expect(s.stats()).toMatchObject({ written: 0, dropped: 4, failedWrites: 3, buffered: 0 });
    expect(fake.writes()).toHaveLength(3);
    const warns = lines.filter((l) => l.kind === 'write-failed');
    expect(warns).toHaveLength(1); // three failures, one line within the interval
    expect(warns[0]).toMatchObject({ module: 'events', status: 503 });
  });

  it('v1: drops a batch InfluxDB rejects (4xx) and goes on with the next one', async () => {
    fake = await startFakeInflux((req, seen) =>
      req.path === '/write' && seen.filter((r) => r.path === '/write').length === 1
        ? { status: 400, body: '{"error":"partial write: field type conflict"}' }
        : defaultReply(req),
    );
    const s = open(fake, { batchSize: 2 });
    for (let i = 0; i < 4; i++) s.write(ev(i));
    await s.flush();
    expect(s.stats()).toMatchObject({ written: 2, dropped: 2, failedWrites: 1, buffered: 0 });
  });

  it('v1: a 404 (database dropped) re-creates the database and retries the batch', async () => {
    fake = await startFakeInflux((req, seen) =>
      req.path === '/write' && seen.filter((r) => r.path === '/write').length === 1
        ? { status: 404, body: '{"error":"database not found: \\"reach\\""}' }
        : defaultReply(req),
    );
    const s = open(fake);
    s.write(ev(1));
    await waitFor(async () => (await s.flush(), s.stats().written === 1), { timeoutMs: 5000 });
    expect(fake.requests.map((r) => r.path)).toEqual(['/query', '/write', '/query', '/write']);
    expect(s.stats()).toMatchObject({ written: 1, dropped: 0, failedWrites: 1 });
  });

  it('keeps at most maxBufferPoints, dropping the oldest, all counted', async () => {
    fake = await startFakeInflux();
    const s = open(fake, { maxBufferPoints: 10 });
    for (let i = 0; i < 25; i++) s.write(ev(i));
    expect(s.stats()).toMatchObject({ dropped: 15, buffered: 10 });
    await s.flush();
    expect(s.stats()).toMatchObject({ written: 10, dropped: 15, buffered: 0 });
    expect(fake.writes()[0]?.body).toContain('task_id="t15"');
    expect(fake.writes()[0]?.body).not.toContain('task_id="t14"');
  });

  it('drops invalid events (counted) and writes the rest', async () => {
    fake = await startFakeInflux();
    const s = open(fake);
    s.write(ev(1));
    s.write(ev(2, { attempt: Number.NaN }));
    s.write(null as unknown as TaskEvent);
    await s.flush();
    expect(s.stats()).toMatchObject({ written: 1, dropped: 2, buffered: 0 });
  });

  it('a hanging server costs requestTimeoutMs per request, and close() keeps to closeTimeoutMs', async () => {
    fake = await startFakeInflux((req) => (req.path === '/write' ? 'hang' : defaultReply(req)));
    const s = open(fake, { requestTimeoutMs: 150, closeTimeoutMs: 400 });
    for (let i = 0; i < 100; i++) s.write(ev(i));
    const t0 = Date.now();
    await s.flush();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(s.stats()).toMatchObject({ failedWrites: 1, buffered: 100 });
    const t1 = Date.now();
    await s.close();
    expect(Date.now() - t1).toBeLessThan(1000);
    expect(s.stats()).toMatchObject({ written: 0, dropped: 100, buffered: 0 });
  });

  it('close() is idempotent, flushes, and writes after it are counted as dropped', async () => {
    fake = await startFakeInflux();
    const s = open(fake);
    s.write(ev(1));
    const first = s.close();
    expect(s.close()).toBe(first);
    await first;
    expect(s.stats()).toMatchObject({ written: 1, dropped: 0 });
    s.write(ev(2));
    expect(s.stats()).toMatchObject({ written: 1, dropped: 1, buffered: 0 });
    accounted(s, 2);
  });

  it('auto: buffers while /ping fails, then picks v1 for 1.6.7', async () => {
    let up = false;
    fake = await startFakeInflux((req) =>
      req.path === '/ping' && !up ? { status: 503 } : defaultReply(req),
    );
    const s = open(fake, { api: 'auto' });
    s.write(ev(1));
    await s.flush();
    expect(s.stats()).toMatchObject({ api: 'none', buffered: 1, written: 0 });
    up = true;
    await s.flush();
    expect(s.stats()).toMatchObject({ api: 'v1', buffered: 0, written: 1 });
    expect(fake.writes()[0]?.path).toBe('/write');
  });

  it('auto: picks v2 for 2.x and writes /api/v2/write with the token, org, bucket and ns', async () => {
    fake = await startFakeInflux((req) => defaultReply(req, 'v2.7.11'));
    const s = open(fake, { api: 'auto', token: 'tok', org: 'acme', bucket: 'b1' });
    s.write(ev(1, { latency_ms: 4 }));
    await s.flush();
    expect(s.stats()).toMatchObject({ api: 'v2', written: 1, buffered: 0 });
    const w = fake.writes()[0];
    expect(w?.path).toBe('/api/v2/write');
    expect(Object.fromEntries(w?.query ?? [])).toEqual({
      org: 'acme',
      bucket: 'b1',
      precision: 'ns',
    });
    expect(w?.headers.authorization).toBe('Token tok');
    expect(w?.body).toContain('latency_ms=4');
  });

  it('v2: failed batches go to the client retry buffer, bounded by maxBufferPoints; close drops the rest', async () => {
    fake = await startFakeInflux((req) =>
      req.path === '/api/v2/write' ? { status: 503 } : defaultReply(req),
    );
    const s = open(fake, { api: 'v2', maxBufferPoints: 3, batchSize: 2, retryBaseDelayMs: 60_000 });
    s.write(ev(1));
    s.write(ev(2));
    await s.flush();
    expect(s.stats()).toMatchObject({ failedWrites: 1, dropped: 0, buffered: 2 });
    s.write(ev(3));
    s.write(ev(4));
    await s.flush(); // the retry buffer overflows: the oldest batch is dropped
    expect(s.stats()).toMatchObject({ failedWrites: 2, dropped: 2, buffered: 2 });
    await s.close();
    expect(s.stats()).toMatchObject({ written: 0, dropped: 4, buffered: 0 });
  });

  it('v2: drops a batch after maxRetries failed retries', async () => {
    fake = await startFakeInflux((req) =>
      req.path === '/api/v2/write' ? { status: 503 } : defaultReply(req),
    );
    const s = open(fake, { api: 'v2', maxRetries: 1 });
    for (let i = 0; i < 3; i++) s.write(ev(i));
    await s.flush();
    await waitFor(() => s.stats().dropped === 3, { timeoutMs: 5000 });
    expect(s.stats()).toMatchObject({ written: 0, dropped: 3, failedWrites: 2, buffered: 0 });
  });
});
