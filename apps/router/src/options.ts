import { Type, type Static } from '@sinclair/typebox';
import { envSchema } from 'env-schema';
import { DEFAULT_PREFIX } from '@agent-reach/protocol';
import { WINDOW_PATTERN } from '@agent-reach/analytics';

/** Settings of the router. */
export interface RouterOptions {
  /** @default 8081 (env ROUTER_PORT) */
  port: number;
  /** @default '0.0.0.0' (env HOST) */
  host: string;
  /** @default 'redis://127.0.0.1:6379' (env REDIS_URL) */
  redisUrl: string;
  /** @default 'reach' (env REACH_PREFIX) */
  prefix: string;
  /** Lease age past which an agent gets no task, re-checked at delivery. @default 30000 (env REACH_OFFLINE_MS) */
  offlineMs: number;
  /** How often the snapshot is re-read besides notifications. @default 5000 (env REACH_SNAPSHOT_MS) */
  snapshotIntervalMs: number;
  /** Largest task payload once serialised, bytes. @default 1048576 (env REACH_MAX_PAYLOAD_BYTES) */
  maxPayloadBytes: number;
  /** Task timeout when the caller gives none, seconds; 0 for none. @default 0 (env REACH_DEFAULT_TIMEOUT_S) */
  defaultTimeoutS: number;
  /** Candidates tried per submission before NO_AGENT. @default 3 (env REACH_MAX_CANDIDATES) */
  maxCandidates: number;
  /** Connections for long-polls on callback topics. @default 64 (env REACH_CALLBACK_CONNECTIONS) */
  callbackConnections: number;
  /** Hops past which a task submitted during another's handling is a loop. @default 10 (env REACH_MAX_HOPS) */
  maxHops: number;
  /** How long a claimed task may stay undelivered before registry-sync re-drives it. @default 10000 (env REACH_DISPATCH_GRACE_MS) */
  dispatchGraceMs: number;
  /** How long dead letters are kept, seconds. @default 604800 (env REACH_DLQ_RETENTION_S) */
  dlqRetentionS: number;
  /** How long an idle callback topic is kept, seconds. @default 604800 (env REACH_CALLBACK_RETENTION_S) */
  callbackRetentionS: number;
  /** Approximate cap on entries per callback topic. @default 100000 (env REACH_CALLBACK_MAXLEN) */
  callbackMaxLen: number;
  /** How far back a task's timeline is looked for in InfluxDB once its Redis state expired. @default '30d' (env REACH_TIMELINE_LOOKBACK) */
  timelineLookback: string;
  /** An agent at or above this share of max_concurrency is skipped while another has room. @default 0.85 (env REACH_WATERMARK) */
  watermark: number;
  /** Per capability, when every agent is at capacity: queue in the pool or 429. @default {} = reject (env REACH_BACKPRESSURE, JSON) */
  backpressure: Record<string, 'queue' | 'reject'>;
  /** How long a session sticks to its agent, seconds. @default 3600 (env REACH_SESSION_TTL_S) */
  sessionTtlS: number;
  /** How long a submission that finds every agent at capacity waits for a free slot before 429 AT_CAPACITY; 0 answers at once. @default 200 (env REACH_ADMISSION_WAIT_MS) */
  admissionWaitMs: number;
  /** How long a pooled task without timeout_s waits for an agent. @default 300000 (env REACH_POOL_WAIT_MS) */
  poolWaitMs: number;
  /** A Redis command unanswered this long fails the request with 503. @default 800 (env REACH_STORE_TIMEOUT_MS) */
  storeTimeoutMs: number;
  /** @default 'info' (env LOG_LEVEL) */
  logLevel: string;
}

const EnvSchema = Type.Object({
  ROUTER_PORT: Type.Integer({ default: 8081, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379' }),
  REACH_PREFIX: Type.String({ default: DEFAULT_PREFIX, pattern: '^[A-Za-z0-9_.:-]{1,64}$' }),
  REACH_OFFLINE_MS: Type.Integer({ default: 30000, minimum: 200 }),
  REACH_SNAPSHOT_MS: Type.Integer({ default: 5000, minimum: 50 }),
  REACH_MAX_PAYLOAD_BYTES: Type.Integer({ default: 1048576, minimum: 1024 }),
  REACH_DEFAULT_TIMEOUT_S: Type.Integer({ default: 0, minimum: 0 }),
  REACH_MAX_CANDIDATES: Type.Integer({ default: 3, minimum: 1 }),
  REACH_CALLBACK_CONNECTIONS: Type.Integer({ default: 64, minimum: 1 }),
  REACH_MAX_HOPS: Type.Integer({ default: 10, minimum: 1 }),
  REACH_DISPATCH_GRACE_MS: Type.Integer({ default: 10000, minimum: 100 }),
  REACH_DLQ_RETENTION_S: Type.Integer({ default: 604800, minimum: 1 }),
  REACH_CALLBACK_RETENTION_S: Type.Integer({ default: 604800, minimum: 1 }),
  REACH_CALLBACK_MAXLEN: Type.Integer({ default: 100000, minimum: 100 }),
  REACH_TIMELINE_LOOKBACK: Type.String({ default: '30d', pattern: WINDOW_PATTERN }),
  REACH_STORE_TIMEOUT_MS: Type.Integer({ default: 800, minimum: 50 }),
  REACH_WATERMARK: Type.Number({ default: 0.85, exclusiveMinimum: 0, maximum: 1 }),
  REACH_BACKPRESSURE: Type.String({ default: '{}' }),
  REACH_SESSION_TTL_S: Type.Integer({ default: 3600, minimum: 1 }),
  REACH_ADMISSION_WAIT_MS: Type.Integer({ default: 200, minimum: 0, maximum: 60000 }),
  REACH_POOL_WAIT_MS: Type.Integer({ default: 300000, minimum: 100 }),
  LOG_LEVEL: Type.String({ default: 'info' }),
});
type Env = Static<typeof EnvSchema>;

function backpressureMap(text: string): Record<string, 'queue' | 'reject'> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(
      'settings: REACH_BACKPRESSURE must be a JSON object such as {"embed": "queue"}',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      'settings: REACH_BACKPRESSURE must be a JSON object of capability → "queue" | "reject"',
    );
  }
  const out: Record<string, 'queue' | 'reject'> = {};
  for (const [cap, mode] of Object.entries(parsed as Record<string, unknown>)) {
    if (mode !== 'queue' && mode !== 'reject')
      throw new Error(`settings: REACH_BACKPRESSURE.${cap} must be "queue" or "reject"`);
    out[cap] = mode;
  }
  return out;
}

/** Reads and checks the environment; throws a message naming the bad variable. */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RouterOptions> {
  const e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false });
  return {
    port: e.ROUTER_PORT,
    host: e.HOST,
    redisUrl: e.REDIS_URL,
    prefix: e.REACH_PREFIX,
    offlineMs: e.REACH_OFFLINE_MS,
    snapshotIntervalMs: e.REACH_SNAPSHOT_MS,
    maxPayloadBytes: e.REACH_MAX_PAYLOAD_BYTES,
    defaultTimeoutS: e.REACH_DEFAULT_TIMEOUT_S,
    maxCandidates: e.REACH_MAX_CANDIDATES,
    callbackConnections: e.REACH_CALLBACK_CONNECTIONS,
    maxHops: e.REACH_MAX_HOPS,
    dispatchGraceMs: e.REACH_DISPATCH_GRACE_MS,
    dlqRetentionS: e.REACH_DLQ_RETENTION_S,
    callbackRetentionS: e.REACH_CALLBACK_RETENTION_S,
    callbackMaxLen: e.REACH_CALLBACK_MAXLEN,
    timelineLookback: e.REACH_TIMELINE_LOOKBACK,
    storeTimeoutMs: e.REACH_STORE_TIMEOUT_MS,
    watermark: e.REACH_WATERMARK,
    backpressure: backpressureMap(e.REACH_BACKPRESSURE),
    sessionTtlS: e.REACH_SESSION_TTL_S,
    admissionWaitMs: e.REACH_ADMISSION_WAIT_MS,
    poolWaitMs: e.REACH_POOL_WAIT_MS,
    logLevel: e.LOG_LEVEL,
  };
}

/** Resolves settings once, filling defaults. */
export function compileRouterOptions(opts: Partial<RouterOptions> = {}): RouterOptions {
  return {
    port: 8081,
    host: '0.0.0.0',
    redisUrl: 'redis://127.0.0.1:6379',
    prefix: DEFAULT_PREFIX,
    offlineMs: 30000,
    snapshotIntervalMs: 5000,
    maxPayloadBytes: 1048576,
    defaultTimeoutS: 0,
    maxCandidates: 3,
    callbackConnections: 64,
    maxHops: 10,
    dispatchGraceMs: 10000,
    dlqRetentionS: 604800,
    callbackRetentionS: 604800,
    callbackMaxLen: 100000,
    timelineLookback: '30d',
    storeTimeoutMs: 800,
    watermark: 0.85,
    backpressure: {},
    sessionTtlS: 3600,
    admissionWaitMs: 200,
    poolWaitMs: 300000,
    logLevel: 'info',
    ...opts,
  };
}
