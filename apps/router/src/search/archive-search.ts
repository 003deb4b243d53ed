import { queryStatements, type InfluxSource, type Row } from '@agent-reach/analytics';
import { DEFAULT_TENANT, splitScopedId } from '@agent-reach/protocol';
import {
  inRange,
  matches,
  positionOf,
  type FoundTask,
  type SearchFilter,
  type StorePage,
} from './search-filter.ts';

/** The measurement final tasks are archived in (docs/OBSERVABILITY.md, History). */
const MEASUREMENT = 'task_archive';

/** An InfluxQL string literal. */
const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The InfluxQL condition a tenant's points meet (the default tenant's carry no tag, or its name). */
function tenantCondition(tenant: string): string {
  return tenant === DEFAULT_TENANT
    ? `("tenant" = '' OR "tenant" = ${quote(DEFAULT_TENANT)})`
    : `"tenant" = ${quote(tenant)}`;
}

/**
 * The InfluxQL of an archive page: the time range pushed into the query as a bound on the point's
 * time (a task ends at or after it was created, so `since` bounds both), the tags and fields
 * filtered by InfluxDB, newest ended first, at most `max` rows.
 */
export function archiveQuery(f: SearchFilter, max: number): string {
  const where = [
    `time >= ${Math.floor(f.since)}ms`,
    `"created_at_ms" >= ${Math.floor(f.since)}`,
    `"created_at_ms" <= ${Math.floor(f.until)}`,
  ];
  // InfluxQL compares no strings by order: ties at the cursor's millisecond are told apart here.
  if (f.before !== undefined) where.push(`"created_at_ms" <= ${Math.floor(f.before.at)}`);
  if (f.capability !== undefined) where.push(`"capability" = ${quote(f.capability)}`);
  if (f.statuses !== undefined && f.statuses.size > 0) {
    where.push(`(${[...f.statuses].map((s) => `"status" = ${quote(s)}`).join(' OR ')})`);
  }
  if (f.agentId !== undefined) where.push(`"agent_id" = ${quote(f.agentId)}`);
  if (f.tenant !== undefined) where.push(tenantCondition(f.tenant));
  if (f.errorCode !== undefined) where.push(`"error_code" = ${quote(f.errorCode)}`);
  if (f.parentTaskId !== undefined) where.push(`"parent_task_id" = ${quote(f.parentTaskId)}`);
  if (f.minDurationMs !== undefined) where.push(`"duration_ms" >= ${Math.floor(f.minDurationMs)}`);
  return (
    `SELECT "task_id", "capability", "status", "agent_id", "tenant", "attempts", "created_at_ms", ` +
    `"ended_at_ms", "error_code", "parent_task_id" FROM "${MEASUREMENT}" ` +
    `WHERE ${where.join(' AND ')} ORDER BY time DESC LIMIT ${Math.floor(max)}`
  );
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const int = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : undefined;

/** A row of {@link archiveQuery} as a found task, or undefined when it lacks its id or times. */
export function foundOfRow(row: Row): FoundTask | undefined {
  const id = text(row.task_id);
  const createdAt = int(row.created_at_ms);
  if (id === '' || createdAt === undefined) return undefined;
  const endedAt = int(row.ended_at_ms) ?? int(row.time);
  const parent = text(row.parent_task_id);
  const code = text(row.error_code);
  return {
    id,
    tenant: splitScopedId(id).tenant,
    status: text(row.status),
    capability: text(row.capability),
    agentId: text(row.agent_id),
    attempts: int(row.attempts) ?? 0,
    createdAt,
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(code ? { errorCode: code } : {}),
    ...(parent ? { parentTaskId: parent } : {}),
    archived: true,
  };
}

/**
 * The archive's side of search: final tasks older than Redis keeps, from the `task_archive`
 * measurement. When InfluxDB returns `max` rows, the ones it left out ended before the oldest it
 * returned, so they were created before it too: the page is complete only down to that time.
 */
export async function searchArchive(
  source: InfluxSource,
  f: SearchFilter,
  max: number,
): Promise<StorePage> {
  const [rows = []] = await queryStatements(source, [archiveQuery(f, max)]);
  const found: FoundTask[] = [];
  let oldestEnd = Infinity;
  for (const row of rows) {
    const t = foundOfRow(row);
    const time = int(row.time);
    if (time !== undefined) oldestEnd = Math.min(oldestEnd, time);
    if (t === undefined || (f.tenant !== undefined && t.tenant !== f.tenant)) continue;
    if (matches(f, t) && inRange(f, positionOf(t))) found.push(t);
  }
  if (rows.length < max || !Number.isFinite(oldestEnd)) return { found };
  // Every task created after the oldest end time was returned; ids sort below U+FFFF.
  return { found, frontier: { at: oldestEnd, id: '\uffff' } };
}
