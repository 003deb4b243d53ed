import {
  isNewer,
  type SearchPosition,
  type TaskStatus,
  type TaskSummary,
} from '@agent-reach/protocol';

/** What one search page looks for, the caller's names already turned into stored ids. */
export interface SearchFilter {
  capability?: string;
  statuses?: ReadonlySet<TaskStatus>;
  agentId?: string;
  /** Only this tenant's tasks; undefined: every tenant's (operators). */
  tenant?: string;
  errorCode?: string;
  /** The stored (scoped) id of the parent. */
  parentTaskId?: string;
  minDurationMs?: number;
  /** created_at bounds, epoch ms, both inclusive. */
  since: number;
  until: number;
  /** The page holds tasks strictly before this position (the cursor's). */
  before?: SearchPosition;
}

/** A task a store found, before it is shown to the caller. */
export interface FoundTask {
  /** The stored (scoped) task_id. */
  id: string;
  tenant: string;
  status: string;
  capability: string;
  agentId: string;
  attempts: number;
  createdAt: number;
  endedAt?: number;
  errorCode?: string;
  /** Stored (scoped). */
  parentTaskId?: string;
  archived?: boolean;
}

/** What one store answered for a page: its matches, and how far down it looked. */
export interface StorePage {
  found: FoundTask[];
  /**
   * Set when the store stopped with more left to read: everything it holds at or after this
   * position was read; what lies before it was not.
   */
  frontier?: SearchPosition;
}

/** The position of a found task. */
export const positionOf = (t: FoundTask): SearchPosition => ({ at: t.createdAt, id: t.id });

/** The created-to-end duration of a final task. */
export const durationOf = (t: FoundTask): number | undefined =>
  t.endedAt !== undefined ? Math.max(0, t.endedAt - t.createdAt) : undefined;

/** True when a task lies in the filter's time range and before its cursor. */
export function inRange(f: SearchFilter, p: SearchPosition): boolean {
  if (p.at < f.since || p.at > f.until) return false;
  return f.before === undefined || isNewer(f.before, p);
}

/** True when a found task passes every filter but the time range and the tenant. */
export function matches(f: SearchFilter, t: FoundTask): boolean {
  if (f.capability !== undefined && t.capability !== f.capability) return false;
  if (f.statuses !== undefined && !f.statuses.has(t.status as TaskStatus)) return false;
  if (f.agentId !== undefined && t.agentId !== f.agentId) return false;
  if (f.errorCode !== undefined && t.errorCode !== f.errorCode) return false;
  if (f.parentTaskId !== undefined && t.parentTaskId !== f.parentTaskId) return false;
  if (f.minDurationMs !== undefined) {
    const took = durationOf(t);
    if (took === undefined || took < f.minDurationMs) return false;
  }
  return true;
}

/** One merged page: at most `limit` tasks newest first, and where the next page starts. */
export interface MergedPage {
  found: FoundTask[];
  next?: SearchPosition;
}

/**
 * Merges the stores' pages newest first, a task found in several once (the first store's copy:
 * Redis before the archive). A store that stopped early cuts the page at its frontier, since
 * what it did not read could come before what the others found below it; the next page then
 * starts there, or after the last task when the page is full.
 */
export function mergePages(pages: readonly StorePage[], limit: number): MergedPage {
  let cut: SearchPosition | undefined;
  for (const page of pages) {
    if (page.frontier && (cut === undefined || isNewer(page.frontier, cut))) cut = page.frontier;
  }
  const seen = new Set<string>();
  const all: FoundTask[] = [];
  for (const page of pages) {
    for (const t of page.found) {
      if (seen.has(t.id)) continue;
      seen.add(t.id);
      const p = positionOf(t);
      if (cut !== undefined && isNewer(cut, p)) continue;
      all.push(t);
    }
  }
  all.sort((a, b) => (isNewer(positionOf(a), positionOf(b)) ? -1 : 1));
  if (all.length > limit) {
    const found = all.slice(0, limit);
    return { found, next: positionOf(found[found.length - 1] as FoundTask) };
  }
  return cut !== undefined ? { found: all, next: cut } : { found: all };
}

/** A found task as the caller sees it, its ids named by `show`. */
export function summaryOf(t: FoundTask, show: (id: string) => string): TaskSummary {
  const out: TaskSummary = {
    task_id: show(t.id),
    tenant: t.tenant,
    status: t.status,
    capability: t.capability,
    agent_id: t.agentId,
    attempts: t.attempts,
    created_at: t.createdAt,
  };
  const took = durationOf(t);
  if (t.endedAt !== undefined) out.ended_at = t.endedAt;
  if (took !== undefined) out.duration_ms = took;
  if (t.errorCode) out.error_code = t.errorCode;
  if (t.parentTaskId) out.parent_task_id = show(t.parentTaskId);
  if (t.archived) out.archived = true;
  return out;
}
