import { tenantCondition } from './four-figures.ts';
import { queryStatements, type InfluxSource, type Row } from './influx-source.ts';
import { loadQuery, regexLiteral, renderQuery } from './queries.ts';
import type { SeriesPoint } from './schemas.ts';
import { InvalidWindowError, parseWindow, WINDOW_PATTERN, type Window } from './window.ts';

/** The most points one series answers: a finer step over the window is refused. */
export const MAX_SERIES_POINTS = 1000;

/** Points a series has when no step is given: the step is the window / this, in whole seconds. */
export const DEFAULT_SERIES_POINTS = 60;

/** Options of {@link capabilitySeries}. */
export interface SeriesOptions {
  /** How far back from now, e.g. `1h` (see `parseWindow`). */
  window: string;
  /**
   * The width of each point, e.g. `1m`, at most the window and giving at most
   * {@link MAX_SERIES_POINTS} points.
   * @default the window / {@link DEFAULT_SERIES_POINTS}, in whole seconds
   */
  step?: string;
  /** The capability. */
  capability: string;
  /** Only this tenant's tasks (see {@link tenantCondition}); every tenant's when left out. */
  tenant?: string;
  /** The clock, epoch ms (tests). @default Date.now() */
  now?: number;
}

/** A capability's outcomes and execution time per step over a window. */
export interface CapabilitySeries {
  window: Window;
  step: Window;
  capability: string;
  /** One per step, oldest first, the last one the step now running; steps without points are 0. */
  points: SeriesPoint[];
}

/**
 * The step of a series over `window`: `step` checked, or the default.
 * @throws InvalidWindowError when `step` is malformed, longer than the window, or too fine.
 */
export function seriesStep(window: Window, step: string | undefined): Window {
  if (step === undefined) {
    const seconds = Math.max(1, Math.ceil(window.seconds / DEFAULT_SERIES_POINTS));
    return { literal: `${seconds}s`, seconds };
  }
  if (!new RegExp(WINDOW_PATTERN).test(step)) {
    throw new InvalidWindowError(
      step,
      `step must be a number and a unit s|m|h|d|w, e.g. 1m; got ${JSON.stringify(step)}`,
    );
  }
  const parsed = parseWindow(step);
  if (parsed.seconds > window.seconds) {
    throw new InvalidWindowError(step, `step ${step} is longer than the window ${window.literal}`);
  }
  const points = Math.ceil(window.seconds / parsed.seconds);
  if (points > MAX_SERIES_POINTS) {
    const least = Math.ceil(window.seconds / MAX_SERIES_POINTS);
    throw new InvalidWindowError(
      step,
      `step ${step} over ${window.literal} gives ${points} points, more than ${MAX_SERIES_POINTS}: take a step of at least ${least}s`,
    );
  }
  return parsed;
}

/**
 * The statements {@link capabilitySeries} runs — the shipped chart files `outcomes-over-time`
 * and `execution-time-over-time`, so the dashboards draw the same lines — and the start of the
 * first step. The time range is whole steps, aligned on the epoch as InfluxDB's
 * `GROUP BY time()` buckets are: as many as the window needs, the last one holding `now`.
 * @throws InvalidWindowError for a bad window or step.
 */
export function seriesStatements(opts: SeriesOptions): {
  window: Window;
  step: Window;
  startMs: number;
  count: number;
  statements: string[];
} {
  const window = parseWindow(opts.window);
  const step = seriesStep(window, opts.step);
  const stepMs = step.seconds * 1000;
  const now = opts.now ?? Date.now();
  const count = Math.ceil(window.seconds / step.seconds);
  const endMs = (Math.floor(now / stepMs) + 1) * stepMs;
  const startMs = endMs - count * stepMs;
  const vars = {
    timeFilter: `${tenantCondition(opts.tenant)}time >= ${startMs}ms and time < ${endMs}ms`,
    capability: regexLiteral(opts.capability),
    group: 'capability',
    __interval: step.literal,
    __interval_ms: stepMs,
  };
  const statements = ['outcomes-over-time', 'execution-time-over-time'].map((name) =>
    renderQuery(loadQuery(name), vars),
  );
  return { window, step, startMs, count, statements };
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A capability's completed, failed and dead outcomes and its execution time (received →
 * completed: mean and p95) per step over a window ending now, from the task events in InfluxDB
 * (docs/OBSERVABILITY.md, `GET /v1/stats/series`).
 * @throws InvalidWindowError for a bad window or step; InfluxQueryError when InfluxDB fails.
 */
export async function capabilitySeries(
  source: InfluxSource,
  opts: SeriesOptions,
): Promise<CapabilitySeries> {
  const { window, step, startMs, count, statements } = seriesStatements(opts);
  const stepMs = step.seconds * 1000;
  const points: SeriesPoint[] = Array.from({ length: count }, (_, i) => ({
    at: startMs + i * stepMs,
    completed: 0,
    failed: 0,
    dead: 0,
    execution_mean_ms: null,
    execution_p95_ms: null,
  }));
  const pointAt = (row: Row): SeriesPoint | undefined => {
    const at = num(row.time);
    return at === null ? undefined : points[Math.round((at - startMs) / stepMs)];
  };
  const [outcomes = [], execution = []] = await queryStatements(source, statements);
  for (const row of outcomes) {
    const point = pointAt(row);
    const n = Math.round(num(row.count) ?? 0);
    if (!point) continue;
    if (row.stage === 'completed') point.completed = n;
    else if (row.stage === 'failed') point.failed = n;
    else if (row.stage === 'dead') point.dead = n;
  }
  for (const row of execution) {
    const point = pointAt(row);
    if (!point) continue;
    point.execution_mean_ms = num(row.mean);
    point.execution_p95_ms = num(row.p95);
  }
  return { window, step, capability: opts.capability, points };
}
