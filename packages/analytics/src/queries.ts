import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding every query the dashboards and the API run: `<name>.influxql` and
 * `<name>.flux`. The code loads these very files, so the dashboards and the API cannot drift.
 */
export const QUERIES_DIR = fileURLToPath(
  new URL('../../../infra/influxdb/queries/', import.meta.url),
);

/** InfluxQL queries the API runs (the four figures, their breakdown and a task's timeline). */
export const API_QUERIES = [
  'stage-counts',
  'success-completed',
  'success-outcomes',
  'receipt-latency',
  'execution-time',
  'completion-rate',
  'failure-codes',
  'task-timeline',
] as const;

/** InfluxQL queries only the dashboards' charts run (grouped by time). */
export const CHART_QUERIES = [
  'receipt-latency-over-time',
  'execution-time-over-time',
  'completions-over-time',
  'outcomes-over-time',
] as const;

/** The name of a shipped `.influxql` file, without the extension. */
export type QueryName = (typeof API_QUERIES)[number] | (typeof CHART_QUERIES)[number];

/** Every shipped `.influxql` file, without the extension. */
export const QUERY_NAMES: readonly QueryName[] = [...API_QUERIES, ...CHART_QUERIES];

/**
 * The variables a query template may use. The names and their meaning are Grafana's, so the
 * same text runs in a Grafana panel unchanged:
 * - `$timeFilter` → `time >= now() - 15m and time <= now()`
 * - `$capability` → a regular expression inside `/^…$/` (`.*` for every capability)
 * - `$group` → the tag to group by (`capability` or `agent_id`)
 * - `$__range_s` → the window in seconds; `$__interval` / `$__interval_ms` → a chart's bucket
 * - `$task_id` → inside a single-quoted string literal
 */
export interface QueryVars {
  timeFilter: string;
  capability?: string;
  group?: string;
  __range_s?: number;
  __interval?: string;
  __interval_ms?: number;
  task_id?: string;
}

const cache = new Map<string, string>();

/** Strips `--` comment lines and joins the rest into one line, as dashboards store a query. */
export function queryText(source: string): string {
  return source
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
}

/**
 * The text of a shipped query file, comments stripped (read once, then cached).
 * @param ext - `influxql` or `flux`; Flux files keep their comments and line breaks.
 * @throws when the file is missing: the package must run from a checkout that holds infra/.
 */
export function loadQuery(name: string, ext: 'influxql' | 'flux' = 'influxql'): string {
  const key = `${name}.${ext}`;
  let text = cache.get(key);
  if (text === undefined) {
    const raw = readFileSync(`${QUERIES_DIR}${key}`, 'utf8');
    text = ext === 'influxql' ? queryText(raw) : raw.trim();
    cache.set(key, text);
  }
  return text;
}

/** Escapes a value for a single-quoted InfluxQL string literal. */
export function stringLiteral(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

/** Escapes a value so that it matches itself literally inside an InfluxQL `/regex/`. */
export function regexLiteral(value: string): string {
  return value.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

const VAR = /\$(__range_s|__interval_ms|__interval|timeFilter|capability|group|task_id)\b/g;

/**
 * Fills a query template's variables. Values are inserted as given (escape them with
 * {@link regexLiteral} / {@link stringLiteral} first); `$capability` defaults to `.*`.
 * @throws when the template uses a variable that `vars` does not give.
 */
export function renderQuery(template: string, vars: QueryVars): string {
  return template.replace(VAR, (_match, name: string) => {
    const value = name === 'capability' ? (vars.capability ?? '.*') : vars[name as keyof QueryVars];
    if (value === undefined) throw new Error(`query variable $${name} has no value`);
    return String(value);
  });
}
