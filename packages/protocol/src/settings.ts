import { Type } from '@sinclair/typebox';
import { DEFAULT_PREFIX } from './keys.ts';

/**
 * Defaults of the settings both services read. Each value is written here and nowhere else: the
 * services' own defaults (`ROUTER_DEFAULTS`, `REGISTRY_DEFAULTS`) spread these, and their
 * environment schemas carry no defaults.
 */
export const SHARED_DEFAULTS = {
  /** Loopback: a service is reachable from elsewhere only when HOST says so (docs/SECURITY.md). */
  host: '127.0.0.1',
  /** `REACH_AUTH`: open only while every listener is on loopback. */
  auth: 'auto',
  redisUrl: 'redis://127.0.0.1:6379',
  prefix: DEFAULT_PREFIX,
  logLevel: 'info',
  /** Lease age past which an agent is OFFLINE and gets no task. */
  offlineMs: 30_000,
  /** registry-sync writes a snapshot this often at least; routers re-read it this often. */
  snapshotIntervalMs: 5000,
  /** A claimed task still undelivered this long is re-driven by registry-sync. */
  dispatchGraceMs: 10_000,
  /** An agent at or above this share of max_concurrency is skipped while another has room. */
  watermark: 0.85,
  dlqRetentionS: 604_800,
  /** How long a session sticks to the agent its last task was sent to, seconds. */
  sessionTtlS: 3600,
  callbackRetentionS: 604_800,
  callbackMaxLen: 100_000,
  /**
   * How many shards the acks stream and the due set are split into, each under its own hash tag,
   * so that a Redis Cluster has no single hot slot (keys.ts `acksOf`, `dueOf`). 1: the single
   * `acks` and `due` keys. It may grow while tasks are in flight, never shrink.
   */
  shards: 1,
} as const;

/** The key prefix pattern (`REACH_PREFIX`); `reachKeys` refuses any other. */
const PREFIX_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';

/**
 * The environment variables both services read, with their bounds and no defaults (a variable
 * left unset takes its value from `SHARED_DEFAULTS` when the options are compiled, so a service
 * can tell a value it was given from a default). Each service's schema spreads these.
 */
export const SHARED_ENV = {
  HOST: Type.Optional(Type.String()),
  REACH_AUTH: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('off'), Type.Literal('required')]),
  ),
  REACH_ADMIN_KEY: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_URL: Type.Optional(Type.String()),
  REACH_PREFIX: Type.Optional(Type.String({ pattern: PREFIX_PATTERN })),
  REACH_OFFLINE_MS: Type.Optional(Type.Integer({ minimum: 200 })),
  REACH_SNAPSHOT_MS: Type.Optional(Type.Integer({ minimum: 50 })),
  REACH_DISPATCH_GRACE_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_WATERMARK: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  REACH_DLQ_RETENTION_S: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_SESSION_TTL_S: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_CALLBACK_RETENTION_S: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_CALLBACK_MAXLEN: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_SHARDS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
  LOG_LEVEL: Type.Optional(Type.String()),
};

/** `options` without the keys whose value is `undefined`: what an environment actually set. */
export function setOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * The settings registry-sync owns and publishes under `keys.settings()` for routers and tools:
 * option name → environment variable, which is also the field of the published hash
 * (`HGET reach:settings REACH_OFFLINE_MS`). Leases, retries, the watermark and retention must
 * agree across processes, so registry-sync's values win over a router's own.
 */
export const PUBLISHED_SETTINGS = {
  heartbeatIntervalMs: 'REACH_HEARTBEAT_MS',
  suspectMs: 'REACH_SUSPECT_MS',
  offlineMs: 'REACH_OFFLINE_MS',
  snapshotIntervalMs: 'REACH_SNAPSHOT_MS',
  dispatchGraceMs: 'REACH_DISPATCH_GRACE_MS',
  receiptTimeoutMs: 'REACH_RECEIPT_TIMEOUT_MS',
  maxAttempts: 'REACH_MAX_ATTEMPTS',
  retryBaseMs: 'REACH_RETRY_BASE_MS',
  retryCapMs: 'REACH_RETRY_CAP_MS',
  watermark: 'REACH_WATERMARK',
  dlqRetentionS: 'REACH_DLQ_RETENTION_S',
  callbackRetentionS: 'REACH_CALLBACK_RETENTION_S',
  callbackMaxLen: 'REACH_CALLBACK_MAXLEN',
  shards: 'REACH_SHARDS',
} as const;

/** A setting registry-sync publishes. */
export type PublishedSettingName = keyof typeof PUBLISHED_SETTINGS;

/** The values registry-sync publishes, by option name. */
export type PublishedSettings = { [K in PublishedSettingName]: number };

/** Fields of the published hash besides the settings. */
export const PublishedSettingsField = {
  /** The registry-sync instance that wrote the hash last. */
  publishedBy: 'published_by',
  /** When it did, epoch ms of its clock. */
  publishedAt: 'published_at',
} as const;

/** The hash registry-sync writes: every published setting, who wrote it and when. */
export function encodeSettings(
  values: PublishedSettings,
  publishedBy: string,
  publishedAt: number,
): Record<string, string> {
  const hash: Record<string, string> = {
    [PublishedSettingsField.publishedBy]: publishedBy,
    [PublishedSettingsField.publishedAt]: String(publishedAt),
  };
  for (const [name, env] of Object.entries(PUBLISHED_SETTINGS))
    hash[env] = String(values[name as PublishedSettingName]);
  return hash;
}

/**
 * Reads the published hash (as `HGETALL` returns it); undefined when nothing is published. A
 * field that is missing or not a finite number ≥ 0 is left out, so a reader keeps its own value.
 */
export function decodeSettings(
  hash: Record<string, string> | null | undefined,
): Partial<PublishedSettings> | undefined {
  if (!hash || Object.keys(hash).length === 0) return undefined;
  const out: Partial<PublishedSettings> = {};
  for (const [name, env] of Object.entries(PUBLISHED_SETTINGS)) {
    const text = hash[env];
    const value = text === undefined || text === '' ? NaN : Number(text);
    if (Number.isFinite(value) && value >= 0) out[name as PublishedSettingName] = value;
  }
  return out;
}
