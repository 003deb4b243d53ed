import { queryStatements, type InfluxSource, type Row } from './influx-source.ts';
import { loadQuery, regexLiteral, renderQuery, stringLiteral } from './queries.ts';
import type { FigureGroup } from './schemas.ts';
import { parseWindow, timeFilter, type Window } from './window.ts';

/** The tenant whose tasks carry bare ids and no `tenant` tag (`DEFAULT_TENANT` of the protocol). */
const DEFAULT_TENANT = 'default';

/**
 * The condition that keeps one tenant's points, ending in `AND `, to put before a time filter;
 * empty for every tenant. The shipped files (which the dashboards run as they are) need no
 * variable of their own for it.
 */
export function tenantCondition(tenant: string | undefined): string {
  if (tenant === undefined) return '';
  return `"tenant" = '${stringLiteral(tenant === DEFAULT_TENANT ? '' : tenant)}' AND `;
}

/** The tag the figures are grouped by. */
export type GroupBy = 'capability' | 'agent_id';

/** Options of {@link fourFigures}. */
export interface FourFiguresOptions {
  /** How far back from now, e.g. `15m` (see `parseWindow`). */
  window: string;
  /** Only this capability; every capability when left out. */
  capability?: string;
  /** One row per capability or per agent. */
  groupBy: GroupBy;
  /**
   * Only tasks of this tenant (the events' `tenant` tag, absent for the default tenant); every
   * tenant's when left out.
   */
  tenant?: string;
}

/** The four figures per group over a window. */
export interface FourFigures {
  window: Window;
  groupBy: GroupBy;
  capability: string | undefined;
  /** One entry per capability or agent that has any point in the window, sorted by key. */
  groups: FigureGroup[];
}

/** The queries behind the figures, in the order {@link fourFigures} sends them. */
const FIGURE_QUERIES = [
  'stage-counts',
  'success-completed',
  'success-outcomes',
  'receipt-latency',
  'execution-time',
  'completion-rate',
  'failure-codes',
] as const;

/**
 * The InfluxQL statements {@link fourFigures} runs: the shipped query files with the window,
 * capability and grouping filled in.
 * @throws InvalidWindowError for a bad window.
 */
export function fourFiguresStatements(opts: FourFiguresOptions): string[] {
  const window = parseWindow(opts.window);
  const vars = {
    timeFilter: tenantCondition(opts.tenant) + timeFilter(window),
    group: opts.groupBy,
    __range_s: window.seconds,
    ...(opts.capability !== undefined ? { capability: regexLiteral(opts.capability) } : {}),
  };
  return FIGURE_QUERIES.map((name) => renderQuery(loadQuery(name), vars));
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function int(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : 0;
}

function emptyGroup(key: string): FigureGroup {
  return {
    key,
    success_rate: null,
    outcomes: { completed: 0, failed: 0, dead: 0, total: 0 },
    receipt_ms: { mean: null, p95: null, count: 0 },
    execution_ms: { mean: null, p95: null, count: 0, handler_mean: null, handler_p95: null },
    completion_rate: { completed: 0, per_second: 0, per_minute: 0 },
    stages: {},
    failures_by_code: {},
  };
}

/**
 * The four figures every dashboard shows, per capability or per agent, over a window ending now:
 * delivery success rate, receipt latency (mean, p95), execution time (mean, p95) and completion
 * rate — one InfluxQL request running the shipped query files (docs/OBSERVABILITY.md defines each).
 * @throws InvalidWindowError for a bad window; InfluxQueryError when InfluxDB fails or is unreachable.
 */
export async function fourFigures(
  source: InfluxSource,
  opts: FourFiguresOptions,
): Promise<FourFigures> {
  const window = parseWindow(opts.window);
  const statements = fourFiguresStatements(opts);
  const [
    counts = [],
    completed = [],
    outcomes = [],
    receipt = [],
    execution = [],
    rate = [],
    codes = [],
  ] = await queryStatements(source, statements);
  const groups = new Map<string, FigureGroup>();
  const groupOf = (row: Row): FigureGroup => {
    const key = typeof row[opts.groupBy] === 'string' ? (row[opts.groupBy] as string) : '';
    let group = groups.get(key);
    if (!group) {
      group = emptyGroup(key);
      groups.set(key, group);
    }
    return group;
  };
  for (const row of counts) {
    const g = groupOf(row);
    if (typeof row.stage === 'string') g.stages[row.stage] = int(row.count);
  }
  for (const row of completed) groupOf(row).outcomes.completed = int(row.completed);
  for (const row of outcomes) groupOf(row).outcomes.total = int(row.outcomes);
  for (const row of receipt)
    groupOf(row).receipt_ms = { mean: num(row.mean), p95: num(row.p95), count: int(row.count) };
  for (const row of execution) {
    groupOf(row).execution_ms = {
      mean: num(row.mean),
      p95: num(row.p95),
      count: int(row.count),
      handler_mean: num(row.handler_mean),
      handler_p95: num(row.handler_p95),
    };
  }
  for (const row of rate) {
    const perSecond = num(row.per_second) ?? 0;
    groupOf(row).completion_rate = {
      completed: int(row.completed),
      per_second: perSecond,
      per_minute: perSecond * 60,
    };
  }
  for (const row of codes) {
    // Points from before failures had codes carry none.
    const code = typeof row.error_code === 'string' && row.error_code ? row.error_code : 'UNKNOWN';
    const g = groupOf(row);
    g.failures_by_code[code] = (g.failures_by_code[code] ?? 0) + int(row.count);
  }
  for (const g of groups.values()) {
    g.outcomes.failed = g.stages.failed ?? 0;
    g.outcomes.dead = g.stages.dead ?? 0;
    // The statements of one request each read the window up to their own now(): in a short
    // window an outcome landing between two of them can make `completed` exceed `total`, and a
    // rate over 1 matches no branch of the reply's schema (a 500 the fuzz found).
    g.success_rate =
      g.outcomes.total > 0 ? Math.min(1, g.outcomes.completed / g.outcomes.total) : null;
  }
  return {
    window,
    groupBy: opts.groupBy,
    capability: opts.capability,
    groups: [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}
