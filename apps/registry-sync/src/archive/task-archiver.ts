import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  archivedTaskToLine,
  isInfluxQueryError,
  writeLineProtocol,
  type ArchivedTaskPoint,
} from '@agent-reach/events';
import { decodeTaskRecord, type ReachKeys } from '@agent-reach/protocol';
import { archiveDoneScript } from '../commands/archive-done.ts';
import { archivePointOf, type ArchiveRecordSettings } from './archive-record.ts';

/** Tasks whose points are built between two turns of the event loop, so acks are not held up. */
const YIELD_EVERY = 50;

/** A day in ms: tombstones are kept in one hash per task shard and UTC day of task ends. */
export const DAY_MS = 86_400_000;

/** Where archived tasks are written: the InfluxDB and database the stage events go to. */
export interface ArchiveTarget {
  url: string;
  db: string;
  token?: string | undefined;
  /** @default 10000 */
  timeoutMs?: number;
}

/** The archiver's settings. */
export interface TaskArchiverSettings extends ArchiveRecordSettings {
  /** Most entries per task shard and pass. */
  archiveBatch: number;
  /** How long a tombstone is kept, days. */
  archiveTombstoneDays: number;
  /** How long a completed task is kept once final, seconds. */
  taskRetentionS: number;
  /** How long a dead or cancelled task is kept once final, seconds. */
  dlqRetentionS: number;
}

/** What the archiver works with. */
export interface TaskArchiverOptions {
  /** A connection where archive-done-n.lua is loaded (`archiveDoneScript`). */
  redis: RedisClient;
  keys: ReachKeys;
  /** Undefined: no InfluxDB, so entries are finished (expiry set) with nothing written. */
  target: ArchiveTarget | undefined;
  settings: TaskArchiverSettings;
  logger: Logger;
}

/** What one pass did. */
export interface ArchivePass {
  /** Points InfluxDB accepted. */
  archived: number;
  /** Tasks that could not be archived and were given up (a point InfluxDB refused). */
  failed: number;
  /** InfluxDB was away: the entries stay for the next pass. */
  blocked: boolean;
  /** Some shard had a full batch: more may be waiting. */
  more: boolean;
}

// One counter set per process, as the housekeeping passes': every registry-sync registry shows it.
const archivedTotal = new Counter({
  name: 'reach_archive_archived_total',
  help: 'Final tasks this process wrote to the InfluxDB archive (task_archive) as the leader',
  registers: [],
});
const failuresTotal = new Counter({
  name: 'reach_archive_failures_total',
  help: 'Archive failures: kind=write, a batch InfluxDB did not take (kept in the outbox, tried again); kind=refused, a task whose point InfluxDB refused (given up)',
  labelNames: ['kind'] as const,
  registers: [],
});
failuresTotal.inc({ kind: 'write' }, 0);
failuresTotal.inc({ kind: 'refused' }, 0);

interface OutboxEntry {
  id: string;
  taskId: string;
}

/**
 * Moves final tasks from the archive outboxes (one stream per task shard, appended by the script
 * that made each task final) to InfluxDB: reads a batch per shard, reads those tasks' records,
 * writes their points in one request, and only once InfluxDB accepted them finishes the entries
 * (archive-done-n.lua: expiry, tombstone, entry deleted). While InfluxDB is away the entries and
 * the records wait, unexpired; nothing is lost. Run by one instance at a time (`ArchiveDuty`).
 */
export class TaskArchiver {
  private readonly log: Logger;

  constructor(private readonly o: TaskArchiverOptions) {
    this.log = o.logger.child({ module: 'archive' });
  }

  /** One pass over every task shard. Rejects only when Redis fails. */
  async pass(): Promise<ArchivePass> {
    const out: ArchivePass = { archived: 0, failed: 0, blocked: false, more: false };
    for (let shard = 0; shard < this.o.keys.taskShards(); shard++) {
      const r = await this.shardPass(shard);
      out.archived += r.archived;
      out.failed += r.failed;
      out.more ||= r.more;
      if (r.blocked) {
        out.blocked = true;
        break;
      }
    }
    return out;
  }

  /** Entries waiting in every outbox (one XLEN per task shard). */
  async depth(): Promise<number> {
    const { redis, keys } = this.o;
    const lens = await Promise.all(
      Array.from({ length: keys.taskShards() }, (_, shard) =>
        redis.xlen(keys.archiveOutbox(shard)),
      ),
    );
    return lens.reduce((a, b) => a + b, 0);
  }

  private async shardPass(shard: number): Promise<ArchivePass> {
    const { redis, keys, settings } = this.o;
    const outbox = keys.archiveOutbox(shard);
    const raw = await redis.xrange(outbox, '-', '+', 'COUNT', settings.archiveBatch);
    const entries: OutboxEntry[] = [];
    const malformed: string[] = [];
    for (const [id, fields] of raw) {
      const at = fields.indexOf('t');
      const taskId = at >= 0 ? (fields[at + 1] ?? '') : '';
      if (taskId === '') malformed.push(id);
      else entries.push({ id, taskId });
    }
    // Not written by a script of ours: nothing to archive.
    if (malformed.length > 0) await redis.xdel(outbox, ...malformed);
    const result: ArchivePass = {
      archived: 0,
      failed: 0,
      blocked: false,
      more: raw.length >= settings.archiveBatch,
    };
    if (entries.length === 0) return result;
    const points = await this.pointsOf(entries);
    const lines: string[] = [];
    const written = new Map<string, number>();
    for (const [i, point] of points.entries()) {
      if (point === undefined) continue;
      try {
        lines.push(archivedTaskToLine(point));
        written.set(entries[i]?.id ?? '', point.ended_at_ms);
      } catch (err: unknown) {
        result.failed++;
        this.log.warn({ err, task_id: point.task_id }, 'task cannot be archived; given up');
      }
    }
    if (lines.length > 0 && this.o.target) {
      const t = this.o.target;
      try {
        await writeLineProtocol(t.url, t.db, lines, { token: t.token, timeoutMs: t.timeoutMs });
        result.archived = lines.length;
      } catch (err: unknown) {
        if (!isInfluxQueryError(err) || err.retryable) {
          failuresTotal.inc({ kind: 'write' });
          this.log.warn(
            { err: err instanceof Error ? err.message : String(err), tasks: lines.length },
            'InfluxDB did not take the archive batch; kept in the outbox for the next pass',
          );
          return { ...result, blocked: true, more: false };
        }
        // Refused (a point InfluxDB will never take): it may have written the others (a partial
        // write); tried again, the batch would block the outbox for good.
        result.failed += lines.length;
        this.log.warn(
          { err: err.message, tasks: lines.length },
          'InfluxDB refused an archive batch',
        );
      }
    }
    archivedTotal.inc(result.archived);
    failuresTotal.inc({ kind: 'refused' }, result.failed);
    await this.finish(shard, entries, this.o.target ? written : new Map());
    return result;
  }

  /** Each entry's point, read from its task's records (one pipeline: the shard's keys share a slot). */
  private async pointsOf(
    entries: readonly OutboxEntry[],
  ): Promise<(ArchivedTaskPoint | undefined)[]> {
    const { redis, keys, settings } = this.o;
    const pipe = redis.pipeline();
    for (const e of entries) {
      pipe.hgetall(keys.task(e.taskId));
      pipe.lrange(keys.timeline(e.taskId), 0, -1);
      pipe.smembers(keys.children(e.taskId));
    }
    const replies = (await pipe.exec()) ?? [];
    const points: (ArchivedTaskPoint | undefined)[] = [];
    for (const [i, e] of entries.entries()) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const [hashErr, hash] = replies[3 * i] ?? [];
      const [, lines] = replies[3 * i + 1] ?? [];
      const [, children] = replies[3 * i + 2] ?? [];
      if (hashErr) throw hashErr;
      const task = decodeTaskRecord((hash ?? {}) as Record<string, string>);
      points.push(
        task
          ? archivePointOf(
              e.taskId,
              task,
              (lines ?? []) as string[],
              (children ?? []) as string[],
              settings,
            )
          : undefined,
      );
    }
    return points;
  }

  /** Expiry and tombstones for the tasks written (`written`: entry id → end ms), every entry deleted. */
  private async finish(
    shard: number,
    entries: readonly OutboxEntry[],
    written: ReadonlyMap<string, number>,
  ): Promise<void> {
    const { redis, keys, settings } = this.o;
    const now = Date.now();
    const items = entries.map((e) => {
      const end = written.get(e.id) ?? 0;
      const day = Math.floor(end / DAY_MS);
      // The day's hash lives until the last of its tombstones is due.
      const tombTtlS = Math.max(
        1,
        Math.ceil(((day + 1) * DAY_MS + settings.archiveTombstoneDays * DAY_MS - now) / 1000),
      );
      return { e, end, day, tombTtlS };
    });
    await archiveDoneScript.run(redis, {
      keys: { outbox: keys.archiveOutbox(shard) },
      args: { taskRetentionS: settings.taskRetentionS, dlqRetentionS: settings.dlqRetentionS },
      moreKeys: items.flatMap(({ e, day }) => [
        keys.task(e.taskId),
        keys.timeline(e.taskId),
        keys.archiveTombstones(shard, day),
      ]),
      items: items.map(({ e, end, tombTtlS }) => ({
        entryId: e.id,
        taskId: e.taskId,
        endMs: end,
        tombTtlS,
      })),
    });
  }
}

/** Adds the archive's counters and `reach_archive_outbox_depth` (read at scrape time) to a registry. */
export function registerArchiveMetrics(registry: Registry, archiver: TaskArchiver): void {
  registry.registerMetric(archivedTotal);
  registry.registerMetric(failuresTotal);
  new Gauge({
    name: 'reach_archive_outbox_depth',
    help: 'Final tasks waiting in the archive outboxes for InfluxDB, every task shard',
    registers: [registry],
    async collect() {
      this.set(await archiver.depth().catch(() => 0));
    },
  });
}
