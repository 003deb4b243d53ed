import type { RedisClient } from '@agent-reach/service-kit/redis';
import { queryStatements, stringLiteral, type InfluxSource } from '@agent-reach/analytics';
import { decodeArchivedTaskRow, TASK_ARCHIVE_MEASUREMENT } from '@agent-reach/events';
import { scopedId, splitScopedId, type ReachKeys, type TaskView } from '@agent-reach/protocol';
import { isWaitTopic } from '../callbacks/wait-topic.ts';
import type { TenantScope } from './tenant-scope.ts';

/** A day in ms: tombstones are kept in one hash per task shard and UTC day of task ends. */
const DAY_MS = 86_400_000;

/** What an {@link ArchiveReader} reads with. */
export interface ArchiveReaderOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** The InfluxDB the archive is written to; undefined: nothing is read back. */
  influx: InfluxSource | undefined;
  /** How many days of tombstones are looked in (REACH_ARCHIVE_TOMBSTONE_DAYS). */
  tombstoneDays: () => number;
}

/** The stored id of an id as the record's tenant shows it (bare: its own; else `<tenant>/<id>`). */
function storedId(tenant: string, shown: string): string {
  const slash = shown.indexOf('/');
  if (slash < 0) return scopedId(tenant, shown);
  return scopedId(shown.slice(0, slash), shown.slice(slash + 1));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads archived tasks back (docs/OBSERVABILITY.md, History): the task's tombstone, one hash per
 * end day under its task shard's hash tag, gives its end time in one pipelined round trip, and
 * InfluxDB is asked for that one millisecond, never a scan of the retention.
 */
export class ArchiveReader {
  constructor(private readonly o: ArchiveReaderOptions) {}

  /** Whether archived tasks can be read here (InfluxDB configured). */
  get enabled(): boolean {
    return this.o.influx !== undefined;
  }

  /** When the archived task ended (its tombstone), or undefined when it has none. */
  async endOf(taskId: string): Promise<number | undefined> {
    const { redis, keys } = this.o;
    const shard = keys.taskShardOf(taskId);
    const today = Math.floor(Date.now() / DAY_MS);
    const pipe = redis.pipeline();
    // Newest day first; one more than kept, as a day's hash lives until its last tombstone is due.
    for (let day = today; day >= today - this.o.tombstoneDays(); day--)
      pipe.hget(keys.archiveTombstones(shard, day), taskId);
    for (const [err, value] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      const end = Number(value);
      if (value !== null && Number.isFinite(end) && end > 0) return end;
    }
    return undefined;
  }

  /**
   * The archived task (its stored id) as `scope`'s requester sees it, marked `archived`, or
   * undefined when it has no tombstone or InfluxDB has no point for it.
   * @throws InfluxQueryError when InfluxDB fails or is unreachable.
   */
  async view(taskId: string, scope: TenantScope): Promise<TaskView | undefined> {
    const influx = this.o.influx;
    if (!influx) return undefined;
    const end = await this.endOf(taskId);
    if (end === undefined) return undefined;
    const statement =
      `SELECT * FROM ${TASK_ARCHIVE_MEASUREMENT} WHERE time >= ${end}ms AND time < ${end + 1}ms` +
      ` AND "task_id" = '${stringLiteral(taskId)}'`;
    const [rows = []] = await queryStatements(influx, [statement]);
    const point = rows.map(decodeArchivedTaskRow).find((p) => p?.task_id === taskId);
    if (!point) return undefined;
    let record: unknown;
    try {
      record = JSON.parse(point.record);
    } catch {
      return undefined;
    }
    if (!isRecord(record)) return undefined;
    const { tenant } = splitScopedId(taskId);
    const show = (id: unknown) =>
      typeof id === 'string' ? scope.show(storedId(tenant, id)) : undefined;
    const view = { ...record, task_id: scope.show(taskId), archived: true } as TaskView;
    const topic =
      typeof record.callback_topic === 'string' ? storedId(tenant, record.callback_topic) : '';
    if (topic === '' || isWaitTopic(topic)) delete view.callback_topic;
    else view.callback_topic = scope.show(topic);
    if (record.parent_task_id !== undefined) view.parent_task_id = show(record.parent_task_id);
    if (Array.isArray(record.children))
      view.children = record.children.map(show).filter((c) => c !== undefined);
    return view;
  }
}
