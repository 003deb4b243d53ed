/**
 * Bytes per archived task on disk in InfluxDB 1.x, for sizing its retention policy
 * (docs/OBSERVABILITY.md, History). Starts its own `influxd` (from PATH) in a temp directory,
 * writes N typical task_archive points per case into a database of their own, lets InfluxDB
 * snapshot and compact them into TSM files, and prints the TSM bytes per task:
 *
 *   node --import tsx apps/registry-sync/src/archive/measure-bytes.ts [N]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { archivedTaskToLine, ensureDatabase, writeLineProtocol } from '@agent-reach/events';
import type { TaskRecord } from '@agent-reach/protocol';
import { archivePointOf } from './archive-record.ts';

const N = Number(process.argv[2] ?? 20_000);
const PORT = 18_086 + Math.floor(Math.random() * 1000);

function bytesUnder(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    total += st.isDirectory() ? bytesUnder(path) : st.size;
  }
  return total;
}

function tsmBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) total += tsmBytes(path);
    else if (name.endsWith('.tsm')) total += st.size;
  }
  return total;
}

/** A completed task as most are: a short payload and result, four stages. */
function task(i: number, withValues: boolean): { id: string; record: TaskRecord } {
  const created = 1_764_900_000_000 + i * 50;
  const text = `summarise document ${i} of the quarterly report, section ${i % 17}`;
  return {
    id: `${['acme', 'globex', 'initech'][i % 3]}/task-${i.toString(36)}-${(i * 7919).toString(36)}`,
    record: {
      status: 'completed',
      capability: `cap-${i % 5}`,
      agentId: `agent-${i % 20}`,
      attempt: 1,
      createdAt: created,
      sentAt: created + 2,
      receivedAt: created + 4,
      completedAt: created + 40 + (i % 300),
      durationMs: 30 + (i % 300),
      messageId: `${created + 2}-0`,
      deadlineMs: 0,
      traceId: (i * 2654435761).toString(16).padStart(32, '0').slice(0, 32),
      ...(withValues
        ? {
            payload: JSON.stringify({ text }),
            result: JSON.stringify({ summary: text.toUpperCase(), tokens: 100 + (i % 50) }),
          }
        : {}),
    },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'archive-bytes-'));
  const conf = join(dir, 'influxdb.conf');
  writeFileSync(
    conf,
    [
      'reporting-disabled = true',
      `bind-address = "127.0.0.1:${PORT + 1000}"`,
      '[meta]',
      `  dir = "${join(dir, 'meta')}"`,
      '[data]',
      `  dir = "${join(dir, 'data')}"`,
      `  wal-dir = "${join(dir, 'wal')}"`,
      '  cache-snapshot-write-cold-duration = "2s"',
      '  compact-full-write-cold-duration = "4s"',
      '  query-log-enabled = false',
      '[http]',
      `  bind-address = "127.0.0.1:${PORT}"`,
      '  log-enabled = false',
    ].join('\n'),
  );
  const influxd = spawn('influxd', ['run', '-config', conf], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${PORT}`;
  try {
    for (let i = 0; ; i++) {
      if (i > 100) throw new Error('influxd did not start');
      const ok = await fetch(`${url}/ping`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const settings = {
      archivePayloads: true,
      archivePayloadsByCapability: {},
      archiveMaxValueBytes: 32_768,
    };
    for (const withValues of [true, false]) {
      const db = withValues ? 'with_values' : 'without_values';
      await ensureDatabase(url, db);
      let lineBytes = 0;
      let recordBytes = 0;
      for (let from = 0; from < N; from += 5000) {
        const lines: string[] = [];
        for (let i = from; i < Math.min(N, from + 5000); i++) {
          const t = task(i, withValues);
          const point = archivePointOf(t.id, t.record, [], [], settings);
          if (!point) throw new Error('not final');
          recordBytes += Buffer.byteLength(point.record);
          const line = archivedTaskToLine(point);
          lineBytes += Buffer.byteLength(line) + 1;
          lines.push(line);
        }
        await writeLineProtocol(url, db, lines);
      }
      // Wait for the cache snapshot and the full compaction: the TSM size stops changing.
      const data = join(dir, 'data', db);
      let last = -1;
      for (let stable = 0; stable < 3;) {
        await new Promise((r) => setTimeout(r, 2000));
        const now = tsmBytes(data);
        stable = now > 0 && now === last ? stable + 1 : 0;
        last = now;
      }
      process.stdout.write(
        `${db}: ${N} tasks, record ${(recordBytes / N).toFixed(0)} B/task, line protocol ` +
          `${(lineBytes / N).toFixed(0)} B/task, TSM on disk ${(last / N).toFixed(1)} B/task ` +
          `(${last} B; data dir ${bytesUnder(data)} B)\n`,
      );
    }
  } finally {
    influxd.kill('SIGTERM');
    await new Promise((r) => influxd.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
