import { splitScopedId, TaskRecordField, type ReachKeys } from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  inRange,
  matches,
  type FoundTask,
  type SearchFilter,
  type StorePage,
} from './search-filter.ts';

/** Index entries read per ZRANGE, and task hashes per pipeline. */
const CHUNK = 256;

/** The task hash fields a search reads, in this order. */
const FIELDS = [
  TaskRecordField.status,
  TaskRecordField.capability,
  TaskRecordField.agentId,
  TaskRecordField.attempt,
  TaskRecordField.createdAt,
  TaskRecordField.completedAt,
  TaskRecordField.deadAt,
  TaskRecordField.cancelledAt,
  TaskRecordField.parentTaskId,
  TaskRecordField.listed,
] as const;

/** The end time of a final task: when it completed, died or was cancelled. */
function endOf(status: string, f: (string | null)[]): number | undefined {
  const at =
    status === 'completed'
      ? f[5]
      : status === 'dead'
        ? f[6]
        : status === 'cancelled'
          ? f[7]
          : undefined;
  const n = Number(at);
  return at && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The code of the last failure in a timeline list, if any. */
function lastErrorCode(entries: readonly string[]): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const text = entries[i] as string;
    if (!text.includes('"error_code"')) continue;
    try {
      const code = (JSON.parse(text) as { error_code?: unknown }).error_code;
      if (typeof code === 'string') return code;
    } catch {
      // A malformed entry names no code.
    }
  }
  return undefined;
}

/** What the Redis side of search reads with. */
export interface RedisSearchOptions {
  redis: RedisClient;
  keys: Pick<ReachKeys, 'task' | 'timeline' | 'taskIndex' | 'taskShards'>;
  /** Most index entries one page reads over every shard (REACH_SEARCH_SCAN_MAX). */
  scanMax: () => number;
}

/**
 * The recent tasks' side of search: each task shard's index (keys.ts `taskIndex`, task_ids
 * scored by created_at) is read newest first in chunks, each chunk's task hashes in one pipeline
 * on the shard's slot, and filtered here; Redis 7.0 has no search module. Every command is short,
 * and a page reads at most `scanMax` entries, so a search never holds Redis (invariant 7). A
 * task whose state expired (its entry outlived it) is skipped.
 */
export class RedisTaskSearch {
  constructor(private readonly o: RedisSearchOptions) {}

  /** Each shard's page for `want` matches; run shard by shard. */
  async search(f: SearchFilter, want: number): Promise<StorePage[]> {
    const shards = Math.max(1, this.o.keys.taskShards());
    const budget = Math.max(CHUNK, Math.ceil(this.o.scanMax() / shards));
    const pages: StorePage[] = [];
    for (let shard = 0; shard < shards; shard++)
      pages.push(await this.shard(shard, f, want, budget));
    return pages;
  }

  private async shard(
    shard: number,
    f: SearchFilter,
    want: number,
    budget: number,
  ): Promise<StorePage> {
    const key = this.o.keys.taskIndex(shard);
    const top = f.before !== undefined ? Math.min(f.before.at, f.until) : f.until;
    const found: FoundTask[] = [];
    let offset = 0;
    for (;;) {
      const n = Math.min(CHUNK, budget - offset);
      const flat = await this.o.redis.zrange(
        key,
        top,
        f.since,
        'BYSCORE',
        'REV',
        'LIMIT',
        offset,
        n,
        'WITHSCORES',
      );
      const entries: { id: string; at: number }[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const id = flat[i] as string;
        const at = Number(flat[i + 1]);
        if (!inRange(f, { at, id })) continue;
        const tenant = splitScopedId(id).tenant;
        if (f.tenant !== undefined && tenant !== f.tenant) continue;
        entries.push({ id, at });
      }
      found.push(...(await this.read(entries, f)));
      offset += flat.length / 2;
      const exhausted = flat.length / 2 < n;
      if (exhausted) return { found };
      if (found.length >= want || offset >= budget) {
        const last = flat.length - 2;
        return { found, frontier: { at: Number(flat[last + 1]), id: flat[last] as string } };
      }
    }
  }

  /** The entries' tasks that pass the filter (one pipeline for their hashes, one for timelines). */
  private async read(
    entries: readonly { id: string; at: number }[],
    f: SearchFilter,
  ): Promise<FoundTask[]> {
    if (entries.length === 0) return [];
    const { redis, keys } = this.o;
    const reads = redis.pipeline();
    for (const e of entries) reads.hmget(keys.task(e.id), ...FIELDS);
    const replies = (await reads.exec()) ?? [];
    const kept: FoundTask[] = [];
    const listed: FoundTask[] = [];
    entries.forEach((e, i) => {
      const [err, raw] = replies[i] ?? [];
      if (err || !Array.isArray(raw)) return;
      const v = raw as (string | null)[];
      const status = v[0];
      if (!status) return;
      const endedAt = endOf(status, v);
      const t: FoundTask = {
        id: e.id,
        tenant: splitScopedId(e.id).tenant,
        status,
        capability: v[1] ?? '',
        agentId: v[2] ?? '',
        attempts: Number(v[3]) || 0,
        createdAt: Number(v[4]) || e.at,
        ...(endedAt !== undefined ? { endedAt } : {}),
        ...(v[8] ? { parentTaskId: v[8] } : {}),
      };
      // The error code is in the timeline list, which only a task with a failure has.
      if (!matches({ ...f, errorCode: undefined }, t)) return;
      if (v[9]) listed.push(t);
      else if (f.errorCode !== undefined) return;
      kept.push(t);
    });
    if (listed.length > 0) {
      const lists = redis.pipeline();
      for (const t of listed) lists.lrange(keys.timeline(t.id), 0, -1);
      const out = (await lists.exec()) ?? [];
      listed.forEach((t, i) => {
        const [err, raw] = out[i] ?? [];
        const code = !err && Array.isArray(raw) ? lastErrorCode(raw as string[]) : undefined;
        if (code !== undefined) t.errorCode = code;
      });
    }
    return f.errorCode === undefined ? kept : kept.filter((t) => t.errorCode === f.errorCode);
  }
}
