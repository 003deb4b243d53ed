import { pino, type Logger } from 'pino';
import { SHARED_SETTINGS } from '@agent-reach/protocol';
import type { EventSinkOptions, InfluxApi } from './types.ts';

/** {@link EventSinkOptions} with every default applied and checked; `url` stays optional (no-op sink). */
export interface ResolvedEventSinkOptions {
  /** Base URL without a trailing slash; `undefined` means a no-op sink. */
  url: string | undefined;
  bucket: string;
  api: InfluxApi;
  token: string | undefined;
  org: string;
  flushIntervalMs: number;
  batchSize: number;
  maxBufferPoints: number;
  requestTimeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  /** Cap of the exponential retry delay. */
  retryMaxDelayMs: number;
  closeTimeoutMs: number;
  /** The sink's own child logger (`{ module: 'events' }`). */
  logger: Logger;
}

/** INFLUX_API's values and the defaults of INFLUX_API and INFLUX_BUCKET: the settings tables'. */
const APIS: readonly InfluxApi[] = SHARED_SETTINGS.influxApi.values;

/** Retry delays never exceed this, so an outage is probed at least twice a minute. */
const RETRY_MAX_DELAY_MS = 30_000;

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) {
    throw new RangeError(
      `EventSinkOptions.${name} must be an integer ≥ ${min}, got ${String(value)}`,
    );
  }
  return v;
}

function normalizeUrl(url: string | undefined): string | undefined {
  if (url === undefined || url.trim() === '') return undefined;
  const trimmed = url.trim();
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch (cause) {
    throw new TypeError(`EventSinkOptions.url is not a URL: ${trimmed}`, { cause });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`EventSinkOptions.url must be http(s), got ${trimmed}`);
  }
  return trimmed.replace(/\/+$/, '');
}

/**
 * Applies the defaults documented on {@link EventSinkOptions} and checks every value once, at
 * start-up, so the write path never has to.
 * @throws RangeError or TypeError naming the bad option.
 */
export function compileEventSinkOptions(opts: EventSinkOptions = {}): ResolvedEventSinkOptions {
  const api = opts.api ?? SHARED_SETTINGS.influxApi.default;
  if (!APIS.includes(api)) {
    throw new TypeError(
      `EventSinkOptions.api must be one of ${APIS.join('|')}, got ${String(api)}`,
    );
  }
  const bucket = opts.bucket ?? SHARED_SETTINGS.influxBucket.default;
  if (bucket === '') throw new TypeError('EventSinkOptions.bucket must not be empty');
  const retryBaseDelayMs = positiveInt('retryBaseDelayMs', opts.retryBaseDelayMs, 500);
  return {
    url: normalizeUrl(opts.url),
    bucket,
    api,
    token: opts.token === '' ? undefined : opts.token,
    org: opts.org ?? '',
    flushIntervalMs: positiveInt('flushIntervalMs', opts.flushIntervalMs, 1000),
    batchSize: positiveInt('batchSize', opts.batchSize, 5000),
    maxBufferPoints: positiveInt('maxBufferPoints', opts.maxBufferPoints, 20_000),
    requestTimeoutMs: positiveInt('requestTimeoutMs', opts.requestTimeoutMs, 2000),
    maxRetries: positiveInt('maxRetries', opts.maxRetries, 3, 0),
    retryBaseDelayMs,
    retryMaxDelayMs: Math.max(retryBaseDelayMs, RETRY_MAX_DELAY_MS),
    closeTimeoutMs: positiveInt('closeTimeoutMs', opts.closeTimeoutMs, 5000),
    logger: (opts.logger ?? pino()).child({ module: 'events' }),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * Reads `INFLUX_URL`, `INFLUX_BUCKET`, `INFLUX_API` (auto|v1|v2), `INFLUX_TOKEN` and `INFLUX_ORG`.
 * Unset or empty variables are left out, so the defaults apply; no `INFLUX_URL` → a no-op sink.
 * @throws TypeError when `INFLUX_API` is set to anything else.
 */
export function eventSinkOptionsFromEnv(env: NodeJS.ProcessEnv): EventSinkOptions {
  const out: EventSinkOptions = {};
  const url = nonEmpty(env.INFLUX_URL);
  if (url !== undefined) out.url = url;
  const bucket = nonEmpty(env.INFLUX_BUCKET);
  if (bucket !== undefined) out.bucket = bucket;
  const api = nonEmpty(env.INFLUX_API)?.toLowerCase();
  if (api !== undefined) {
    if (!(APIS as readonly string[]).includes(api)) {
      throw new TypeError(`INFLUX_API must be one of ${APIS.join('|')}, got ${api}`);
    }
    out.api = api as InfluxApi;
  }
  const token = nonEmpty(env.INFLUX_TOKEN);
  if (token !== undefined) out.token = token;
  const org = nonEmpty(env.INFLUX_ORG);
  if (org !== undefined) out.org = org;
  return out;
}
