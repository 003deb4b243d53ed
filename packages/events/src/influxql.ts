/** Thrown by {@link queryInfluxQL} and {@link ensureDatabase}: HTTP, network or InfluxQL errors. */
export class InfluxQueryError extends Error {
  override readonly name = 'InfluxQueryError';
  /** HTTP status, when the server answered; `undefined` for network errors and timeouts. */
  readonly status: number | undefined;
  /** The InfluxQL text that failed. */
  readonly query: string;
  constructor(message: string, query: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.query = query;
    this.status = status;
  }
  /** True when trying again later may succeed: network errors, timeouts, 429 and 5xx. */
  get retryable(): boolean {
    return this.status === undefined || this.status === 429 || this.status >= 500;
  }
}

/** True when `err` is an {@link InfluxQueryError}. */
export function isInfluxQueryError(err: unknown): err is InfluxQueryError {
  return err instanceof InfluxQueryError;
}

/** Options of {@link queryInfluxQL}. */
export interface InfluxQueryOptions {
  /**
   * Request timeout.
   * @default 10000
   */
  timeoutMs?: number;
}

interface InfluxSeries {
  name?: string;
  tags?: Record<string, string>;
  columns?: string[];
  values?: unknown[][];
}
interface InfluxResult {
  statement_id?: number;
  series?: InfluxSeries[];
  error?: string;
}
interface InfluxResponse {
  results?: InfluxResult[];
  error?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Runs InfluxQL against the v1 `/query` endpoint (POST, so `CREATE`/`DROP` work too) with
 * `epoch=ms`, and flattens every series of every statement into rows keyed by column; `time` is
 * epoch milliseconds. A series' GROUP BY tags are added to its rows unless a column has the name.
 * @param db - database, or `''` for statements that take none (`SHOW DATABASES`, `CREATE DATABASE`).
 * @throws InfluxQueryError on a network error, timeout, HTTP error or an error in any statement.
 */
export async function queryInfluxQL(
  url: string,
  db: string,
  q: string,
  opts: InfluxQueryOptions = {},
): Promise<Array<Record<string, unknown>>> {
  const body = new URLSearchParams({ q, epoch: 'ms' });
  if (db !== '') body.set('db', db);
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}/query`, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    text = await res.text();
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new InfluxQueryError(`InfluxQL request to ${url} failed: ${why}`, q, undefined, {
      cause,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const response: InfluxResponse = isRecord(parsed) ? parsed : {};
  if (!res.ok || typeof response.error === 'string') {
    const why = response.error ?? (text.slice(0, 200) || res.statusText);
    throw new InfluxQueryError(
      `InfluxQL failed (HTTP ${res.status}): ${why} — query: ${q}`,
      q,
      res.status,
    );
  }
  const rows: Array<Record<string, unknown>> = [];
  for (const result of Array.isArray(response.results) ? response.results : []) {
    if (typeof result.error === 'string') {
      throw new InfluxQueryError(`InfluxQL error: ${result.error} — query: ${q}`, q, res.status);
    }
    for (const series of result.series ?? []) {
      const columns = series.columns ?? [];
      for (const values of series.values ?? []) {
        const row: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(series.tags ?? {})) row[k] = v;
        columns.forEach((column, i) => {
          row[column] = values[i];
        });
        rows.push(row);
      }
    }
  }
  return rows;
}

/** Quotes an InfluxQL identifier: `"name"` with `\` and `"` escaped. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * `CREATE DATABASE` on the v1 API; idempotent (InfluxDB 1.x answers success for an existing one).
 * @throws InfluxQueryError as {@link queryInfluxQL}.
 */
export async function ensureDatabase(
  url: string,
  db: string,
  opts: InfluxQueryOptions = {},
): Promise<void> {
  await queryInfluxQL(url, '', `CREATE DATABASE ${quoteIdentifier(db)}`, opts);
}

/**
 * The write API for a server version (header `X-Influxdb-Version`): `v1` below 1.8, which has no
 * `/api/v2/write`; `v2` for 1.8+, 2.x, 3.x and anything unrecognised or missing (newer servers).
 */
export function apiForVersion(version: string | null | undefined): 'v1' | 'v2' {
  const m = /^v?(\d+)\.(\d+)/.exec(version?.trim() ?? '');
  if (!m) return 'v2';
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major === 1 && minor < 8 ? 'v1' : 'v2';
}

/**
 * GET `/ping` and pick the write API with {@link apiForVersion}.
 * @throws InfluxQueryError when the server does not answer 2xx within `timeoutMs`.
 */
export async function detectInfluxApi(url: string, timeoutMs: number): Promise<'v1' | 'v2'> {
  let res: Response;
  try {
    res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new InfluxQueryError(`ping ${url} failed: ${why}`, 'ping', undefined, { cause });
  }
  if (!res.ok)
    throw new InfluxQueryError(`ping ${url} answered HTTP ${res.status}`, 'ping', res.status);
  return apiForVersion(res.headers.get('x-influxdb-version'));
}

/** Options of {@link writeLineProtocol}. */
export interface InfluxWriteOptions extends InfluxQueryOptions {
  /** Sent as `Authorization: Token …` when set. */
  token?: string;
}

/**
 * POSTs line protocol (nanosecond precision) to the v1 `/write` endpoint, which InfluxDB 1.x
 * serves and 1.8+/2.x keep for compatibility; resolves once the server accepted every line.
 * @throws InfluxQueryError on a network error, timeout or refusal (`retryable` tells an outage
 *   from points the server will never take).
 */
export async function writeLineProtocol(
  url: string,
  db: string,
  lines: readonly string[],
  opts: InfluxWriteOptions = {},
): Promise<void> {
  const target = `${url.replace(/\/+$/, '')}/write?db=${encodeURIComponent(db)}&precision=ns`;
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  if (opts.token) headers.authorization = `Token ${opts.token}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(target, {
      method: 'POST',
      headers,
      body: lines.join('\n'),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
    });
    text = await res.text();
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new InfluxQueryError(`InfluxDB write to ${url} failed: ${why}`, 'write', undefined, {
      cause,
    });
  }
  if (!res.ok)
    throw new InfluxQueryError(
      `InfluxDB refused a write (HTTP ${res.status}): ${text.slice(0, 300)}`,
      'write',
      // 404 is "database not found": creating it again may help, so it counts as an outage.
      res.status === 404 ? 503 : res.status,
    );
}
