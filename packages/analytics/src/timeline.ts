import { queryStatements, type InfluxSource } from './influx-source.ts';
import { byStageTime } from '@agent-reach/events';
import { loadQuery, renderQuery, stringLiteral } from './queries.ts';
import type { TimelineStage } from './schemas.ts';
import { parseWindow, timeFilter } from './window.ts';

/** A stage as stored, before gaps are computed: a Redis timeline entry or an InfluxDB point. */
export interface StageRecord {
  stage: string;
  /** Epoch milliseconds. */
  at: number;
  agent_id?: string | null | undefined;
  attempt?: number | null | undefined;
  duration_ms?: number | null | undefined;
  /** Why a task failed, was retried or went dead (Redis `error`/`reason`, InfluxDB `reason`). */
  reason?: string | null | undefined;
}

/**
 * Orders stages by time (then by lifecycle order) and adds `gap_ms`, the time since the stage
 * before (0 for the first).
 */
export function withGaps(records: readonly StageRecord[]): TimelineStage[] {
  const sorted = [...records].sort(byStageTime);
  let previous: number | undefined;
  return sorted.map((r) => {
    const stage: TimelineStage = {
      stage: r.stage,
      at: r.at,
      gap_ms: previous === undefined ? 0 : r.at - previous,
      agent_id: r.agent_id ?? null,
      attempt: r.attempt ?? null,
    };
    if (typeof r.duration_ms === 'number' && Number.isFinite(r.duration_ms))
      stage.duration_ms = r.duration_ms;
    if (typeof r.reason === 'string' && r.reason !== '') stage.reason = r.reason;
    previous = r.at;
    return stage;
  });
}

/** Options of {@link timelineFromInflux}. */
export interface InfluxTimelineOptions {
  /**
   * How far back to look (task_id is a field, so the query scans this whole window).
   * @default '30d'
   */
  lookback?: string;
  /**
   * Where the task's points lie, epoch ms, both ends included (an archived task's creation and
   * end): the query reads that range instead of the look-back window.
   */
  range?: { fromMs: number; toMs: number };
}

/** The InfluxQL that {@link timelineFromInflux} runs. @throws InvalidWindowError for a bad lookback. */
export function taskTimelineStatement(taskId: string, opts: InfluxTimelineOptions = {}): string {
  const range = opts.range;
  return renderQuery(loadQuery('task-timeline'), {
    timeFilter: range
      ? `time >= ${Math.trunc(range.fromMs)}ms and time <= ${Math.trunc(range.toMs)}ms`
      : timeFilter(parseWindow(opts.lookback ?? '30d')),
    task_id: stringLiteral(taskId),
  });
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const numOrNull = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : null;

/** A task as its points in InfluxDB tell it: its stages, and its parent if it is a child. */
export interface InfluxTaskTimeline {
  /** With gaps; empty when InfluxDB has none within the look-back window. */
  stages: TimelineStage[];
  /** The task whose handling submitted this one (its `sent` points' `parent_task_id`). */
  parent_task_id?: string;
}

/**
 * A task's stages from its points in InfluxDB (found by the `task_id` field), with gaps, and
 * its parent's id when its `sent` points carry one.
 * @throws InfluxQueryError when InfluxDB fails or is unreachable.
 */
export async function influxTaskTimeline(
  source: InfluxSource,
  taskId: string,
  opts: InfluxTimelineOptions = {},
): Promise<InfluxTaskTimeline> {
  const [rows = []] = await queryStatements(source, [taskTimelineStatement(taskId, opts)]);
  const stages = withGaps(
    rows
      .filter((row) => typeof row.time === 'number' && typeof row.stage === 'string')
      .map((row) => ({
        stage: row.stage as string,
        at: row.time as number,
        agent_id: str(row.agent_id),
        attempt: numOrNull(row.attempt),
        duration_ms: numOrNull(row.duration_ms),
        reason: str(row.reason),
      })),
  );
  const parent = rows.map((row) => str(row.parent_task_id)).find((p) => p !== null);
  return parent ? { stages, parent_task_id: parent } : { stages };
}

/**
 * A task's stages from its points in InfluxDB (found by the `task_id` field), with gaps; empty
 * when InfluxDB has none within the look-back window.
 * @throws InfluxQueryError when InfluxDB fails or is unreachable.
 */
export async function timelineFromInflux(
  source: InfluxSource,
  taskId: string,
  opts: InfluxTimelineOptions = {},
): Promise<TimelineStage[]> {
  return (await influxTaskTimeline(source, taskId, opts)).stages;
}
