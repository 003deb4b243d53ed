import { Type, type Static } from '@sinclair/typebox';
import { envSchema } from 'env-schema';
import {
  hostListFrom,
  redisExtrasFromEnv,
  type RedisConnectionExtras,
} from '@agent-reach/service-kit';
import { SHARED_DEFAULTS, SHARED_ENV, setOnly } from '@agent-reach/protocol';
import type { AuthSetting } from '@agent-reach/service-kit';
import { WINDOW_PATTERN } from '@agent-reach/analytics';

/**
 * Settings of the router; the defaults are {@link ROUTER_DEFAULTS}. Those marked "shared" are
 * registry-sync's: once it has published them (`keys.settings()`), the router uses its values
 * over these and warns at start-up about one set here that differs (see `SharedSettings`).
 */
export interface RouterOptions {
  /** (env ROUTER_PORT) */
  port: number;
  /** Address to listen on; anything but loopback needs `adminKey` (docs/SECURITY.md). (env HOST) */
  host: string;
  /**
   * `auto`: API keys required unless `host` is loopback; `off`: never (loopback only);
   * `required`: always. (env REACH_AUTH)
   * @default 'auto'
   */
  auth: AuthSetting;
  /** The bootstrap operator key of the default tenant, 32+ characters. (env REACH_ADMIN_KEY) */
  adminKey?: string;
  /** (env REDIS_URL) */
  redisUrl: string;
  /** TLS files, credentials and sentinels besides the URL (env REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY, REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINELS, REDIS_SENTINEL_NAME). @default undefined (the URL alone) */
  redisConnection?: RedisConnectionExtras;
  /** (env REACH_PREFIX) */
  prefix: string;
  /** Lease age past which an agent gets no task, re-checked at delivery; shared. (env REACH_OFFLINE_MS) */
  offlineMs: number;
  /** How often the snapshot is re-read besides notifications. (env REACH_SNAPSHOT_MS) */
  snapshotIntervalMs: number;
  /** Largest task payload once serialised, bytes. (env REACH_MAX_PAYLOAD_BYTES) */
  maxPayloadBytes: number;
  /** Task timeout when the caller gives none, seconds; 0 for none. (env REACH_DEFAULT_TIMEOUT_S) */
  defaultTimeoutS: number;
  /** Candidates tried per submission before NO_AGENT. (env REACH_MAX_CANDIDATES) */
  maxCandidates: number;
  /** Connections for long-polls on callback topics. (env REACH_CALLBACK_CONNECTIONS) */
  callbackConnections: number;
  /**
   * Connections for the live tail of `GET /v1/tasks/:id/events` (one blocking XREAD of at most
   * a second at a time per follower): followers beyond it take turns. (env REACH_EVENTS_CONNECTIONS)
   * @default 16
   */
  eventsConnections: number;
  /** Hops past which a task submitted during another's handling is a loop. (env REACH_MAX_HOPS) */
  maxHops: number;
  /**
   * A child task's deadline is its parent's less this, so the parent hears back in time; a parent
   * with this or less left gets 409 PARENT_DEADLINE_NEAR. (env REACH_CHILD_MARGIN_MS)
   * @default 5000
   */
  childMarginMs: number;
  /** How long a claimed task may stay undelivered before registry-sync re-drives it; shared. (env REACH_DISPATCH_GRACE_MS) */
  dispatchGraceMs: number;
  /** How long dead letters are kept, seconds; shared. (env REACH_DLQ_RETENTION_S) */
  dlqRetentionS: number;
  /** How long an idle callback topic is kept, seconds; shared. (env REACH_CALLBACK_RETENTION_S) */
  callbackRetentionS: number;
  /** Approximate cap on entries per callback topic; shared. (env REACH_CALLBACK_MAXLEN) */
  callbackMaxLen: number;
  /**
   * Shards of the acks stream and the due set (hash-tagged keys, so a Redis Cluster has no single
   * hot slot); shared. May grow while tasks are in flight, never shrink. (env REACH_SHARDS)
   * @default 1
   */
  shards: number;
  /** How far back a task's timeline is looked for in InfluxDB once its Redis state expired. (env REACH_TIMELINE_LOOKBACK) */
  timelineLookback: string;
  /** An agent at or above this share of max_concurrency is skipped while another has room; shared. (env REACH_WATERMARK) */
  watermark: number;
  /** Per capability, when every agent is at capacity: queue in the pool or 429; `{}` rejects. (env REACH_BACKPRESSURE, JSON) */
  backpressure: Record<string, 'queue' | 'reject'>;
  /** How long a session sticks to its agent, seconds; shared. (env REACH_SESSION_TTL_S) */
  sessionTtlS: number;
  /** How long a submission that finds every agent at capacity waits for a free slot before 429 AT_CAPACITY; 0 answers at once. (env REACH_ADMISSION_WAIT_MS) */
  admissionWaitMs: number;
  /** How long a pooled task without timeout_s waits for an agent. (env REACH_POOL_WAIT_MS) */
  poolWaitMs: number;
  /** A Redis command unanswered this long fails the request with 503. (env REACH_STORE_TIMEOUT_MS) */
  storeTimeoutMs: number;
  /**
   * Requests per second of a key whose record sets no `rate_per_s`, across every router; while
   * auth is off, per client address. 0 = unlimited. (env REACH_KEY_RATE_PER_S)
   * @default 0
   */
  keyRatePerS: number;
  /**
   * Tasks in flight of a key whose record sets no `max_inflight`; 0 = unlimited (not counted while
   * auth is off). (env REACH_KEY_MAX_INFLIGHT)
   * @default 0
   */
  keyMaxInflight: number;
  /**
   * Hosts an A2A push-notification URL may name besides loopback, lower case; a webhook is never
   * sent anywhere else (docs/SECURITY.md). (env REACH_A2A_PUSH_HOSTS, comma-separated)
   * @default []
   */
  a2aPushHosts: readonly string[];
  /** (env LOG_LEVEL) */
  logLevel: string;
}

/** Every default of {@link RouterOptions}, each written once (shared ones in `SHARED_DEFAULTS`). */
export const ROUTER_DEFAULTS = {
  host: SHARED_DEFAULTS.host,
  auth: SHARED_DEFAULTS.auth,
  redisUrl: SHARED_DEFAULTS.redisUrl,
  prefix: SHARED_DEFAULTS.prefix,
  logLevel: SHARED_DEFAULTS.logLevel,
  offlineMs: SHARED_DEFAULTS.offlineMs,
  snapshotIntervalMs: SHARED_DEFAULTS.snapshotIntervalMs,
  dispatchGraceMs: SHARED_DEFAULTS.dispatchGraceMs,
  watermark: SHARED_DEFAULTS.watermark,
  dlqRetentionS: SHARED_DEFAULTS.dlqRetentionS,
  callbackRetentionS: SHARED_DEFAULTS.callbackRetentionS,
  callbackMaxLen: SHARED_DEFAULTS.callbackMaxLen,
  shards: SHARED_DEFAULTS.shards,
  port: 8081,
  maxPayloadBytes: 1_048_576,
  defaultTimeoutS: 0,
  maxCandidates: 3,
  callbackConnections: 64,
  eventsConnections: 16,
  maxHops: 10,
  childMarginMs: 5000,
  timelineLookback: '30d',
  storeTimeoutMs: 800,
  backpressure: {},
  sessionTtlS: SHARED_DEFAULTS.sessionTtlS,
  admissionWaitMs: 200,
  poolWaitMs: 300_000,
  keyRatePerS: 0,
  keyMaxInflight: 0,
  a2aPushHosts: [],
} as const satisfies RouterOptions;

// No defaults here: an unset variable is left out, and compileRouterOptions fills it in (so the
// router can tell a shared setting it was given from a default, see SharedSettings).
const EnvSchema = Type.Object({
  ...SHARED_ENV,
  ROUTER_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  REACH_MAX_PAYLOAD_BYTES: Type.Optional(Type.Integer({ minimum: 1024 })),
  REACH_DEFAULT_TIMEOUT_S: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_MAX_CANDIDATES: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_CALLBACK_CONNECTIONS: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_EVENTS_CONNECTIONS: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  REACH_MAX_HOPS: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_CHILD_MARGIN_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
  REACH_TIMELINE_LOOKBACK: Type.Optional(Type.String({ pattern: WINDOW_PATTERN })),
  REACH_STORE_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 50 })),
  REACH_BACKPRESSURE: Type.Optional(Type.String()),
  REACH_ADMISSION_WAIT_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 60000 })),
  REACH_POOL_WAIT_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_KEY_RATE_PER_S: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_KEY_MAX_INFLIGHT: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_A2A_PUSH_HOSTS: Type.Optional(Type.String()),
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

/**
 * Reads and checks the environment; throws a message naming the bad variable. Only the variables
 * that are set appear in the result; compileRouterOptions fills in the rest.
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RouterOptions> {
  const e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false });
  const given: Partial<RouterOptions> = {
    port: e.ROUTER_PORT,
    host: e.HOST,
    auth: e.REACH_AUTH,
    adminKey: e.REACH_ADMIN_KEY,
    redisUrl: e.REDIS_URL,
    redisConnection: redisExtrasFromEnv(env),
    prefix: e.REACH_PREFIX,
    offlineMs: e.REACH_OFFLINE_MS,
    snapshotIntervalMs: e.REACH_SNAPSHOT_MS,
    maxPayloadBytes: e.REACH_MAX_PAYLOAD_BYTES,
    defaultTimeoutS: e.REACH_DEFAULT_TIMEOUT_S,
    maxCandidates: e.REACH_MAX_CANDIDATES,
    callbackConnections: e.REACH_CALLBACK_CONNECTIONS,
    eventsConnections: e.REACH_EVENTS_CONNECTIONS,
    maxHops: e.REACH_MAX_HOPS,
    childMarginMs: e.REACH_CHILD_MARGIN_MS,
    dispatchGraceMs: e.REACH_DISPATCH_GRACE_MS,
    dlqRetentionS: e.REACH_DLQ_RETENTION_S,
    callbackRetentionS: e.REACH_CALLBACK_RETENTION_S,
    callbackMaxLen: e.REACH_CALLBACK_MAXLEN,
    shards: e.REACH_SHARDS,
    timelineLookback: e.REACH_TIMELINE_LOOKBACK,
    storeTimeoutMs: e.REACH_STORE_TIMEOUT_MS,
    watermark: e.REACH_WATERMARK,
    backpressure:
      e.REACH_BACKPRESSURE === undefined ? undefined : backpressureMap(e.REACH_BACKPRESSURE),
    sessionTtlS: e.REACH_SESSION_TTL_S,
    admissionWaitMs: e.REACH_ADMISSION_WAIT_MS,
    poolWaitMs: e.REACH_POOL_WAIT_MS,
    keyRatePerS: e.REACH_KEY_RATE_PER_S,
    keyMaxInflight: e.REACH_KEY_MAX_INFLIGHT,
    a2aPushHosts:
      e.REACH_A2A_PUSH_HOSTS === undefined
        ? undefined
        : hostListFrom(e.REACH_A2A_PUSH_HOSTS, 'REACH_A2A_PUSH_HOSTS'),
    logLevel: e.LOG_LEVEL,
  };
  return setOnly(given);
}

/** Resolves settings once, filling defaults. */
export function compileRouterOptions(opts: Partial<RouterOptions> = {}): RouterOptions {
  return { ...ROUTER_DEFAULTS, backpressure: { ...ROUTER_DEFAULTS.backpressure }, ...opts };
}
