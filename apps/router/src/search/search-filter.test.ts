import { describe, expect, it } from 'vitest';
import {
  mergePages,
  matches,
  summaryOf,
  type FoundTask,
  type SearchFilter,
} from './search-filter.ts';

const task = (id: string, createdAt: number, extra: Partial<FoundTask> = {}): FoundTask => ({
  id,
  tenant: 'default',
  status: 'completed',
  capability: 'cap',
  agentId: 'a1',
  attempts: 1,
  createdAt,
  ...extra,
});

describe('merging store pages', () => {
  it('orders newest first, ties by id descending, and keeps Redis’s copy of a duplicate', () => {
    const redis = { found: [task('b', 10), task('a', 10), task('c', 5)] };
    const archive = { found: [task('c', 5, { archived: true }), task('d', 7, { archived: true })] };
    const page = mergePages([redis, archive], 10);
    expect(page.found.map((t) => t.id)).toEqual(['b', 'a', 'd', 'c']);
    expect(page.found.find((t) => t.id === 'c')?.archived).toBeUndefined();
    expect(page.next).toBeUndefined();
  });

  it('ends a full page at its last task', () => {
    const page = mergePages([{ found: [task('a', 3), task('b', 2), task('c', 1)] }], 2);
    expect(page.found.map((t) => t.id)).toEqual(['a', 'b']);
    expect(page.next).toEqual({ at: 2, id: 'b' });
  });

  it('cuts at the frontier of a store that stopped early', () => {
    // Shard 1 read down to created_at 50 and stopped: shard 2's older task may not come first.
    const shard1 = { found: [task('x', 90)], frontier: { at: 50, id: 'y' } };
    const shard2 = { found: [task('z', 70), task('w', 20)] };
    const page = mergePages([shard1, shard2], 10);
    expect(page.found.map((t) => t.id)).toEqual(['x', 'z']);
    expect(page.next).toEqual({ at: 50, id: 'y' });
  });
});

describe('filters', () => {
  const f: SearchFilter = { since: 0, until: 100 };
  it('match a duration only on ended tasks', () => {
    expect(matches({ ...f, minDurationMs: 10 }, task('a', 0, { endedAt: 20 }))).toBe(true);
    expect(matches({ ...f, minDurationMs: 10 }, task('a', 0, { endedAt: 5 }))).toBe(false);
    expect(matches({ ...f, minDurationMs: 10 }, task('a', 0, { status: 'sent' }))).toBe(false);
  });
  it('match one of several statuses', () => {
    const statuses = new Set(['dead', 'cancelled'] as const);
    expect(matches({ ...f, statuses }, task('a', 0, { status: 'dead' }))).toBe(true);
    expect(matches({ ...f, statuses }, task('a', 0))).toBe(false);
  });
  it('show ids as the requester names them', () => {
    const s = summaryOf(task('acme/t1', 1, { endedAt: 4, parentTaskId: 'acme/p' }), (id) =>
      id.replace('acme/', ''),
    );
    expect(s).toMatchObject({ task_id: 't1', parent_task_id: 'p', duration_ms: 3, ended_at: 4 });
  });
});
