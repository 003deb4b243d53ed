import type { InfluxSource } from '@agent-reach/analytics';
import {
  DEFAULT_SEARCH_LIMIT,
  decodeSearchCursor,
  encodeSearchCursor,
  isValidTenant,
  parseSearchTime,
  type SearchSource,
  type TaskSearchQuery,
  type TaskSearchReply,
  type TaskStatus,
} from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import type { TenantScope } from '../tasks/tenant-scope.ts';
import { searchArchive } from './archive-search.ts';
import type { RedisTaskSearch } from './redis-search.ts';
import { mergePages, summaryOf, type SearchFilter, type StorePage } from './search-filter.ts';

/** What a task search reads from. */
export interface TaskSearchOptions {
  redis: RedisTaskSearch;
  /** The archive; undefined when InfluxDB is not configured (Redis answers alone). */
  influx: InfluxSource | undefined;
  /** How long a final task's state stays in Redis, seconds (REACH_TASK_RETENTION_S). */
  retentionS: () => number;
  /** Most archived rows one page reads (REACH_SEARCH_ARCHIVE_MAX). */
  archiveMax: () => number;
}

/** Thrown by {@link filterOf} when nothing can match (the page is empty). */
class NoMatch extends Error {}

/** The filter a query names for `scope`'s requester, at `now`. @throws INVALID_QUERY, FORBIDDEN */
export function filterOf(
  q: TaskSearchQuery,
  scope: TenantScope,
  now: number,
  retentionS: number,
): SearchFilter {
  const time = (name: 'since' | 'until', fallback: number) => {
    const given = q[name];
    if (given === undefined) return fallback;
    const at = parseSearchTime(given, now);
    if (at === undefined)
      throw httpError('INVALID_QUERY', `${name} ${JSON.stringify(given)} is not a time`);
    return at;
  };
  const since = time('since', now - retentionS * 1000);
  const until = time('until', now);
  if (since > until) throw httpError('INVALID_QUERY', 'since is after until');
  const f: SearchFilter = { since, until };
  if (q.tenant !== undefined) {
    if (!isValidTenant(q.tenant)) throw httpError('INVALID_QUERY', 'tenant is not a tenant name');
    if (!scope.all && q.tenant !== scope.tenant)
      throw httpError('FORBIDDEN', 'only operators may search another tenant’s tasks');
    f.tenant = q.tenant;
  } else if (!scope.all) f.tenant = scope.tenant;
  if (q.capability !== undefined) f.capability = q.capability;
  if (q.status !== undefined) f.statuses = new Set(q.status.split(',') as TaskStatus[]);
  if (q.agent_id !== undefined) f.agentId = q.agent_id;
  if (q.error_code !== undefined) f.errorCode = q.error_code;
  if (q.min_duration_ms !== undefined) f.minDurationMs = q.min_duration_ms;
  if (q.parent_task_id !== undefined) {
    const parent = scope.resolve(q.parent_task_id);
    // A parent the requester may not see has no children it may see: the page is empty.
    if (parent === undefined) throw new NoMatch();
    f.parentTaskId = parent;
  }
  if (q.cursor !== undefined) {
    const before = decodeSearchCursor(q.cursor);
    if (before === undefined)
      throw httpError('INVALID_QUERY', 'cursor is not one a search returned');
    f.before = before;
  }
  return f;
}

/**
 * Task search (`GET /v1/tasks`): one page of the requester's tasks that match, newest first. The
 * recent ones come from Redis (every task created within REACH_TASK_RETENTION_S is still there);
 * when the range reaches further back, from the InfluxDB archive too, the two merged without
 * duplicates (Redis's copy wins).
 */
export class TaskSearch {
  constructor(private readonly o: TaskSearchOptions) {}

  /** @throws INVALID_QUERY, FORBIDDEN; an InfluxQueryError when the archive does not answer */
  async search(q: TaskSearchQuery, scope: TenantScope, now = Date.now()): Promise<TaskSearchReply> {
    const retentionS = this.o.retentionS();
    let f: SearchFilter;
    try {
      f = filterOf(q, scope, now, retentionS);
    } catch (err: unknown) {
      if (err instanceof NoMatch) return { items: [], next_cursor: null, source: 'redis' };
      throw err;
    }
    const limit = q.limit ?? DEFAULT_SEARCH_LIMIT;
    const pages: StorePage[] = await this.o.redis.search(f, limit);
    let source: SearchSource = 'redis';
    if (this.o.influx !== undefined && f.since < now - retentionS * 1000) {
      // Redis's page ends at a position: only archived tasks created at or after it can be on
      // this page, and they ended after it too, so the archive is asked from there.
      const bound = mergePages(pages, limit).next;
      const from = bound !== undefined ? Math.max(f.since, bound.at) : f.since;
      pages.push(await searchArchive(this.o.influx, { ...f, since: from }, this.o.archiveMax()));
      source = 'redis+influxdb';
    }
    const merged = mergePages(pages, limit);
    return {
      items: merged.found.map((t) => summaryOf(t, (id) => scope.show(id))),
      next_cursor: merged.next ? encodeSearchCursor(merged.next) : null,
      source,
    };
  }
}
