import {
  compileEventSinkOptions,
  InfluxQueryError,
  type EventSinkOptions,
} from '@agent-reach/events';

/** Where the events are read from: an InfluxDB that answers InfluxQL on `/query` (1.x, 2.x with DBRP, 3.x). */
export interface InfluxSource {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:8086`. */
  url: string;
  /** Database (v1) or bucket mapped to a database (v2/v3). */
  db: string;
  /** Sent as `Authorization: Token …` when set. */
  token?: string;
  /**
   * Timeout of each request.
   * @default 5000
   */
  timeoutMs?: number;
}

/**
 * The source the events sink writes to, from the same settings (`INFLUX_URL`, `INFLUX_BUCKET`,
 * `INFLUX_TOKEN`, read by `eventSinkOptionsFromEnv`), or `undefined` when no URL is set.
 */
export function influxSourceFrom(
  opts: EventSinkOptions | undefined,
  timeoutMs?: number,
): InfluxSource | undefined {
  if (!opts?.url) return undefined;
  const resolved = compileEventSinkOptions({ ...opts, logger: undefined });
  if (resolved.url === undefined) return undefined;
  return {
    url: resolved.url,
    db: resolved.bucket,
    ...(resolved.token !== undefined ? { token: resolved.token } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}

/** One row of a result: column name → value; `time` is epoch milliseconds; GROUP BY tags are added. */
export type Row = Record<string, unknown>;

interface Series {
  tags?: Record<string, string>;
  columns?: string[];
  values?: unknown[][];
}
interface StatementResult {
  statement_id?: number;
  series?: Series[];
  error?: string;
}

function rowsOf(result: StatementResult): Row[] {
  const rows: Row[] = [];
  for (const series of result.series ?? []) {
    const columns = series.columns ?? [];
    for (const values of series.values ?? []) {
      const row: Row = { ...(series.tags ?? {}) };
      columns.forEach((column, i) => {
        row[column] = values[i];
      });
      rows.push(row);
    }
  }
  return rows;
}

/**
 * Runs several InfluxQL statements in one request and returns the rows of each, in order.
 * @throws InfluxQueryError on a network error, timeout, HTTP error or an error in any statement;
 *   `retryable` tells an outage from a bad query.
 */
export async function queryStatements(
  source: InfluxSource,
  statements: readonly string[],
): Promise<Row[][]> {
  const q = statements.join(';\n');
  const body = new URLSearchParams({ q, db: source.db, epoch: 'ms' });
  const headers: Record<string, string> = {};
  if (source.token) headers.authorization = `Token ${source.token}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${source.url}/query`, {
      method: 'POST',
      body,
      headers,
      signal: AbortSignal.timeout(source.timeoutMs ?? 5000),
    });
    text = await res.text();
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new InfluxQueryError(`InfluxQL request to ${source.url} failed: ${why}`, q, undefined, {
      cause,
    });
  }
  let parsed: { results?: StatementResult[]; error?: string } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // Not JSON: reported below with the status and the start of the body.
  }
  if (!res.ok || typeof parsed.error === 'string') {
    const why = parsed.error ?? (text.slice(0, 200) || res.statusText);
    throw new InfluxQueryError(`InfluxQL failed (HTTP ${res.status}): ${why}`, q, res.status);
  }
  const out: Row[][] = statements.map(() => []);
  for (const result of parsed.results ?? []) {
    if (typeof result.error === 'string') {
      throw new InfluxQueryError(`InfluxQL error: ${result.error}`, q, res.status);
    }
    const i = result.statement_id ?? 0;
    if (i >= 0 && i < out.length) out[i] = rowsOf(result);
  }
  return out;
}
