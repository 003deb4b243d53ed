import { Type, type Static } from '@sinclair/typebox';
import { envSchema } from 'env-schema';
import {
  hostListFrom,
  redisExtrasFromEnv,
  type RedisConnectionExtras,
} from '@agent-reach/service-kit';
import { SHARED_DEFAULTS, SHARED_ENV, setOnly } from '@agent-reach/protocol';
import type { AuthSetting } from '@agent-reach/service-kit';

/**
 * Settings of registry-sync; the defaults are {@link REGISTRY_DEFAULTS}. Those marked
 * "published" are written to Redis (`keys.settings()`, see `PUBLISHED_SETTINGS`) at start-up and
 * with every snapshot, and routers use them over their own.
 */
export interface RegistryOptions {
  /** (env REGISTRY_PORT) */
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
  /** Key prefix; tests use a random one. (env REACH_PREFIX) */
  prefix: string;
  /** Interval agents are told to heartbeat at; published. (env REACH_HEARTBEAT_MS) */
  heartbeatIntervalMs: number;
  /** Lease age after which an agent is SUSPECT; published. (env REACH_SUSPECT_MS) */
  suspectMs: number;
  /** Lease age after which an agent is OFFLINE; published. (env REACH_OFFLINE_MS) */
  offlineMs: number;
  /**
   * How often the registry snapshot is written at least; every status change writes one within
   * 50 ms besides. Published. (env REACH_SNAPSHOT_MS)
   */
  snapshotIntervalMs: number;
  /** How often leases are checked. (env REACH_SWEEP_MS) */
  sweepIntervalMs: number;
  /** How long a final task's state stays in Redis, seconds. (env REACH_TASK_RETENTION_S) */
  taskRetentionS: number;
  /** How long an idle callback topic is kept, seconds; published. (env REACH_CALLBACK_RETENTION_S) */
  callbackRetentionS: number;
  /** Approximate cap on entries per callback topic; published. (env REACH_CALLBACK_MAXLEN) */
  callbackMaxLen: number;
  /**
   * Most progress values and output chunks kept per task; past it (or `streamMaxBytes`) later
   * ones are dropped and one `truncated` event says so. (env REACH_STREAM_MAX_CHUNKS)
   * @default 10000
   */
  streamMaxChunks: number;
  /** Most bytes of progress values and output chunks kept per task. (env REACH_STREAM_MAX_BYTES) @default 1048576 */
  streamMaxBytes: number;
  /**
   * Shards of the acks stream and the due set (hash-tagged keys, so a Redis Cluster has no single
   * hot slot); published. May grow while tasks are in flight, never shrink. (env REACH_SHARDS)
   * @default 1
   */
  shards: number;
  /** Largest accepted request body in bytes. (env REACH_REGISTRY_BODY_LIMIT) */
  bodyLimitBytes: number;
  /** Name of this instance in consumer groups; `sync-<pid>` when unset. (env REACH_INSTANCE_ID) */
  instanceId: string;
  /** Attempts in all before a task is dead-lettered; published. (env REACH_MAX_ATTEMPTS) */
  maxAttempts: number;
  /** First retry backoff; doubles each attempt, ±20 % jitter. Published. (env REACH_RETRY_BASE_MS) */
  retryBaseMs: number;
  /** Longest retry backoff; published. (env REACH_RETRY_CAP_MS) */
  retryCapMs: number;
  /** A task without a receipt this long after it was sent is retried; published. (env REACH_RECEIPT_TIMEOUT_MS) */
  receiptTimeoutMs: number;
  /** An agent whose inbox holds a task unread this long is SUSPECT, heartbeats or not. (env REACH_CONSUME_BOUND_MS) */
  consumeBoundMs: number;
  /**
   * Execution lease of a received task: unless the worker renews it within this long (the SDK
   * does at a third of it), the task is taken back and retried elsewhere, and a late result is
   * refused. (env REACH_EXEC_LEASE_MS)
   * @default 60000
   */
  execLeaseMs: number;
  /** Per-capability execution leases, e.g. {"render": 300000}. (env REACH_EXEC_LEASE_MS_BY_CAPABILITY, JSON) */
  execLeaseMsByCapability: Record<string, number>;
  /** How often each live agent is sent a probe task through its inbox. (env REACH_PROBE_MS) */
  probeIntervalMs: number;
  /** A completion slower than this counts toward ejection. (env REACH_SLOW_MS) */
  slowMs: number;
  /** Per-capability slow thresholds, e.g. {"summarise": 20000}. (env REACH_SLOW_MS_BY_CAPABILITY, JSON) */
  slowMsByCapability: Record<string, number>;
  /** Consecutive slow completions that eject an agent (no variable). */
  slowStreak: number;
  /** How long an ejected agent gets no tasks, seconds. (env REACH_EJECT_S) */
  ejectS: number;
  /**
   * Largest share of a capability's agents ejected or DEGRADED at once. (env REACH_EJECT_MAX_SHARE)
   */
  ejectMaxShare: number;
  /**
   * Error rate (failures, lease lapses and receipt timeouts per task in the agent's health
   * window) over which an agent turns DEGRADED. (env REACH_DEGRADE_ERROR_RATE)
   * @default 0.1
   */
  degradeErrorRate: number;
  /** Tasks in the health window before the error rate counts. (env REACH_DEGRADE_MIN_TASKS) @default 20 */
  degradeMinTasks: number;
  /** How long a DEGRADED agent stays so at least. (env REACH_DEGRADE_COOLDOWN_MS) @default 30000 */
  degradeCooldownMs: number;
  /**
   * Passed probes in a row after the cooldown that bring a DEGRADED agent back to HEALTHY.
   * (env REACH_DEGRADE_RECOVER_PROBES)
   * @default 3
   */
  degradeRecoverProbes: number;
  /** Outcomes kept per agent for its health score and error rate. (env REACH_HEALTH_WINDOW) @default 100 */
  healthWindow: number;
  /** Failed deep probes in a row that make an agent SUSPECT. (env REACH_PROBE_FAILURES) @default 3 */
  probeFailures: number;
  /** How long dead letters are kept, seconds; published. (env REACH_DLQ_RETENTION_S) */
  dlqRetentionS: number;
  /**
   * How long a session sticks to the agent a retry sent its task to, seconds; shared with the
   * router. (env REACH_SESSION_TTL_S)
   */
  sessionTtlS: number;
  /** An assigned task still undelivered after this long is re-driven; published. (env REACH_DISPATCH_GRACE_MS) */
  dispatchGraceMs: number;
  /** A retry that finds no agent for this long is dead-lettered (no_agent). (env REACH_NO_AGENT_WAIT_MS) */
  noAgentWaitMs: number;
  /**
   * An agent at or above this share of max_concurrency is skipped while another has room; retries
   * route with it as the router does. Published. (env REACH_WATERMARK)
   */
  watermark: number;
  /** (env LOG_LEVEL) */
  logLevel: string;
  /**
   * Each agent instance gets a Redis ACL user of its own (its inbox and pools to read, its acks
   * stream shard to append to) in its register reply, and acks must be signed (docs/SECURITY.md).
   * Needs a Redis user for registry-sync that may run ACL. (env REACH_AGENT_ACL, on|off)
   * @default false
   */
  agentAcl: boolean;
  /**
   * Hosts a registration's `card_url` may name besides loopback, lower case (comma-separated in
   * the variable, e.g. `cards.example.com,agents.internal`). (env REACH_CARD_HOSTS)
   * @default [] (loopback only)
   */
  cardHosts: string[];
  /** How long fetching a `card_url` may take, body included. (env REACH_CARD_TIMEOUT_MS) @default 3000 */
  cardTimeoutMs: number;
  /** Largest AgentCard fetched from a `card_url`, in bytes. (env REACH_CARD_MAX_BYTES) @default 65536 */
  cardMaxBytes: number;
}

/** Every default of {@link RegistryOptions}, each written once (shared ones in `SHARED_DEFAULTS`). */
export const REGISTRY_DEFAULTS = {
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
  sessionTtlS: SHARED_DEFAULTS.sessionTtlS,
  callbackRetentionS: SHARED_DEFAULTS.callbackRetentionS,
  callbackMaxLen: SHARED_DEFAULTS.callbackMaxLen,
  shards: SHARED_DEFAULTS.shards,
  port: 8080,
  heartbeatIntervalMs: 5000,
  suspectMs: 15_000,
  sweepIntervalMs: 1000,
  taskRetentionS: 86_400,
  streamMaxChunks: 10_000,
  streamMaxBytes: 1_048_576,
  bodyLimitBytes: 65_536,
  maxAttempts: 4,
  retryBaseMs: 2000,
  retryCapMs: 120_000,
  receiptTimeoutMs: 30_000,
  consumeBoundMs: 10_000,
  execLeaseMs: 60_000,
  execLeaseMsByCapability: {},
  probeIntervalMs: 10_000,
  slowMs: 3000,
  slowMsByCapability: {},
  slowStreak: 5,
  ejectS: 30,
  ejectMaxShare: 0.5,
  degradeErrorRate: 0.1,
  degradeMinTasks: 20,
  degradeCooldownMs: 30_000,
  degradeRecoverProbes: 3,
  healthWindow: 100,
  probeFailures: 3,
  noAgentWaitMs: 300_000,
  agentAcl: false,
  cardHosts: [],
  cardTimeoutMs: 3000,
  cardMaxBytes: 65_536,
} as const satisfies Omit<RegistryOptions, 'instanceId'>;

// No defaults here: an unset variable is left out, and compileRegistryOptions fills it in.
const EnvSchema = Type.Object({
  ...SHARED_ENV,
  REGISTRY_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  REACH_HEARTBEAT_MS: Type.Optional(Type.Integer({ minimum: 50 })),
  REACH_SUSPECT_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_SWEEP_MS: Type.Optional(Type.Integer({ minimum: 20 })),
  REACH_TASK_RETENTION_S: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_STREAM_MAX_CHUNKS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  REACH_STREAM_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1, maximum: 512 * 1024 * 1024 })),
  REACH_REGISTRY_BODY_LIMIT: Type.Optional(Type.Integer({ minimum: 1024 })),
  REACH_INSTANCE_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' })),
  REACH_MAX_ATTEMPTS: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_RETRY_BASE_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_RETRY_CAP_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_RECEIPT_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_CONSUME_BOUND_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_EXEC_LEASE_MS: Type.Optional(Type.Integer({ minimum: 300 })),
  REACH_EXEC_LEASE_MS_BY_CAPABILITY: Type.Optional(Type.String()),
  REACH_PROBE_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_SLOW_MS: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_SLOW_MS_BY_CAPABILITY: Type.Optional(Type.String()),
  REACH_EJECT_S: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_EJECT_MAX_SHARE: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  REACH_DEGRADE_ERROR_RATE: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  REACH_DEGRADE_MIN_TASKS: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_DEGRADE_COOLDOWN_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  REACH_DEGRADE_RECOVER_PROBES: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_HEALTH_WINDOW: Type.Optional(Type.Integer({ minimum: 10, maximum: 1000 })),
  REACH_PROBE_FAILURES: Type.Optional(Type.Integer({ minimum: 1 })),
  REACH_NO_AGENT_WAIT_MS: Type.Optional(Type.Integer({ minimum: 100 })),
  REACH_AGENT_ACL: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  REACH_CARD_HOSTS: Type.Optional(Type.String()),
  REACH_CARD_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
  REACH_CARD_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1_048_576 })),
});

/** REACH_CARD_HOSTS: comma-separated host names (no scheme, port or path), lower-cased. */
export function cardHostsFrom(text: string): string[] {
  return hostListFrom(text, 'REACH_CARD_HOSTS');
}

function slowMap(text: string, name = 'REACH_SLOW_MS_BY_CAPABILITY'): Record<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`settings: ${name} must be a JSON object such as {"summarise": 20000}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`settings: ${name} must be a JSON object of capability → milliseconds`);
  }
  const out: Record<string, number> = {};
  for (const [cap, ms] of Object.entries(parsed)) {
    if (typeof ms !== 'number' || !(ms > 0))
      throw new Error(`settings: ${name}.${cap} must be a positive number`);
    out[cap] = ms;
  }
  return out;
}
type Env = Static<typeof EnvSchema>;

/**
 * Reads and checks the environment; throws a message naming the bad variable. Only the variables
 * that are set appear in the result; compileRegistryOptions fills in the rest.
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RegistryOptions> {
  const e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false });
  const given: Partial<RegistryOptions> = {
    port: e.REGISTRY_PORT,
    host: e.HOST,
    auth: e.REACH_AUTH,
    adminKey: e.REACH_ADMIN_KEY,
    redisUrl: e.REDIS_URL,
    redisConnection: redisExtrasFromEnv(env),
    prefix: e.REACH_PREFIX,
    heartbeatIntervalMs: e.REACH_HEARTBEAT_MS,
    suspectMs: e.REACH_SUSPECT_MS,
    offlineMs: e.REACH_OFFLINE_MS,
    snapshotIntervalMs: e.REACH_SNAPSHOT_MS,
    sweepIntervalMs: e.REACH_SWEEP_MS,
    taskRetentionS: e.REACH_TASK_RETENTION_S,
    streamMaxChunks: e.REACH_STREAM_MAX_CHUNKS,
    streamMaxBytes: e.REACH_STREAM_MAX_BYTES,
    callbackRetentionS: e.REACH_CALLBACK_RETENTION_S,
    callbackMaxLen: e.REACH_CALLBACK_MAXLEN,
    shards: e.REACH_SHARDS,
    bodyLimitBytes: e.REACH_REGISTRY_BODY_LIMIT,
    maxAttempts: e.REACH_MAX_ATTEMPTS,
    retryBaseMs: e.REACH_RETRY_BASE_MS,
    retryCapMs: e.REACH_RETRY_CAP_MS,
    receiptTimeoutMs: e.REACH_RECEIPT_TIMEOUT_MS,
    consumeBoundMs: e.REACH_CONSUME_BOUND_MS,
    execLeaseMs: e.REACH_EXEC_LEASE_MS,
    execLeaseMsByCapability:
      e.REACH_EXEC_LEASE_MS_BY_CAPABILITY === undefined
        ? undefined
        : slowMap(e.REACH_EXEC_LEASE_MS_BY_CAPABILITY, 'REACH_EXEC_LEASE_MS_BY_CAPABILITY'),
    probeIntervalMs: e.REACH_PROBE_MS,
    slowMs: e.REACH_SLOW_MS,
    slowMsByCapability:
      e.REACH_SLOW_MS_BY_CAPABILITY === undefined
        ? undefined
        : slowMap(e.REACH_SLOW_MS_BY_CAPABILITY),
    ejectS: e.REACH_EJECT_S,
    ejectMaxShare: e.REACH_EJECT_MAX_SHARE,
    degradeErrorRate: e.REACH_DEGRADE_ERROR_RATE,
    degradeMinTasks: e.REACH_DEGRADE_MIN_TASKS,
    degradeCooldownMs: e.REACH_DEGRADE_COOLDOWN_MS,
    degradeRecoverProbes: e.REACH_DEGRADE_RECOVER_PROBES,
    healthWindow: e.REACH_HEALTH_WINDOW,
    probeFailures: e.REACH_PROBE_FAILURES,
    dlqRetentionS: e.REACH_DLQ_RETENTION_S,
    sessionTtlS: e.REACH_SESSION_TTL_S,
    dispatchGraceMs: e.REACH_DISPATCH_GRACE_MS,
    noAgentWaitMs: e.REACH_NO_AGENT_WAIT_MS,
    watermark: e.REACH_WATERMARK,
    logLevel: e.LOG_LEVEL,
    instanceId: e.REACH_INSTANCE_ID || undefined,
    agentAcl: e.REACH_AGENT_ACL === undefined ? undefined : e.REACH_AGENT_ACL === 'on',
    cardHosts: e.REACH_CARD_HOSTS === undefined ? undefined : cardHostsFrom(e.REACH_CARD_HOSTS),
    cardTimeoutMs: e.REACH_CARD_TIMEOUT_MS,
    cardMaxBytes: e.REACH_CARD_MAX_BYTES,
  };
  return setOnly(given);
}

/** Resolves settings once, filling defaults and checking that the lease bounds make sense. */
export function compileRegistryOptions(opts: Partial<RegistryOptions> = {}): RegistryOptions {
  const o: RegistryOptions = {
    ...REGISTRY_DEFAULTS,
    slowMsByCapability: { ...REGISTRY_DEFAULTS.slowMsByCapability },
    execLeaseMsByCapability: { ...REGISTRY_DEFAULTS.execLeaseMsByCapability },
    cardHosts: [...REGISTRY_DEFAULTS.cardHosts],
    instanceId: `sync-${process.pid}`,
    ...opts,
  };
  if (!(o.heartbeatIntervalMs < o.suspectMs && o.suspectMs < o.offlineMs)) {
    throw new Error(
      `settings: need REACH_HEARTBEAT_MS < REACH_SUSPECT_MS < REACH_OFFLINE_MS, got ${o.heartbeatIntervalMs} / ${o.suspectMs} / ${o.offlineMs}`,
    );
  }
  return o;
}
