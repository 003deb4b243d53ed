import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  archivedTaskToLine,
  decodeArchivedTaskRow,
  TASK_ARCHIVE_MEASUREMENT,
  type ArchivedTaskPoint,
} from './archive.ts';
import {
  ensureDatabase,
  isInfluxQueryError,
  queryInfluxQL,
  quoteIdentifier,
  writeLineProtocol,
} from './influxql.ts';
import { influxForTests, randomId } from './testing/influx-for-tests.ts';

const influx = influxForTests();
const db = randomId('archive_it');

beforeAll(async () => {
  await ensureDatabase(influx.url, db);
});
afterAll(async () => {
  await queryInfluxQL(influx.url, '', `DROP DATABASE ${quoteIdentifier(db)}`);
});

describe('task_archive on a real InfluxDB', () => {
  it('writes points that read back through the decoder, same millisecond and tags kept apart', async () => {
    const ended = Date.now() - 60_000;
    const point = (taskId: string): ArchivedTaskPoint => ({
      tenant: 'acme',
      capability: 'echo',
      agent_id: 'gpu-7',
      status: 'completed',
      task_id: taskId,
      attempts: 1,
      created_at_ms: ended - 40,
      ended_at_ms: ended,
      duration_ms: 40,
      error_code: '',
      parent_task_id: '',
      record: JSON.stringify({ task_id: taskId.slice(5), result: { text: 'é "quoted" \\ x' } }),
      payload_cut: false,
      result_cut: false,
    });
    const a = point(`acme/${randomId('a')}`);
    const b = point(`acme/${randomId('b')}`);
    await writeLineProtocol(influx.url, db, [archivedTaskToLine(a), archivedTaskToLine(b)]);
    const rows = await queryInfluxQL(
      influx.url,
      db,
      `SELECT * FROM ${TASK_ARCHIVE_MEASUREMENT} WHERE time >= ${ended}ms - 1ms AND time <= ${ended}ms + 1ms`,
    );
    const decoded = rows
      .map(decodeArchivedTaskRow)
      .sort((x, y) => (x?.task_id ?? '').localeCompare(y?.task_id ?? ''));
    expect(decoded).toEqual([a, b]);
    expect(rows[0]?.time).toBe(ended);
  });

  it('reports a refused write as not retryable and an unreachable server as retryable', async () => {
    let refused: unknown;
    try {
      await writeLineProtocol(influx.url, db, ['task_archive,capability=x not-a-field']);
    } catch (err: unknown) {
      refused = err;
    }
    expect(isInfluxQueryError(refused) && !refused.retryable).toBe(true);
    let away: unknown;
    try {
      await writeLineProtocol('http://127.0.0.1:9', db, ['x v=1'], { timeoutMs: 1000 });
    } catch (err: unknown) {
      away = err;
    }
    expect(isInfluxQueryError(away) && away.retryable).toBe(true);
  });
});
