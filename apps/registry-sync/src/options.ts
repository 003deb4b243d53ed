import { Type, type Static } from '@sinclair/typebox';
import { envSchema } from 'env-schema';
import { DEFAULT_PREFIX } from '@agent-reach/protocol';

/** Settings of registry-sync. */
export interface RegistryOptions {
  /** @default 8080 (env REGISTRY_PORT) */
  port: number;
  /** @default '0.0.0.0' (env HOST) */
  host: string;
  /** @default 'redis://127.0.0.1:6379' (env REDIS_URL) */
  redisUrl: string;
  /** Key prefix; tests use a random one. @default 'reach' (env REACH_PREFIX) */
  prefix: string;
  /** Interval agents are told to heartbeat at. @default 5000 (env REACH_HEARTBEAT_MS) */
  heartbeatIntervalMs: number;
  /** Lease age after which an agent is SUSPECT. @default 15000 (env REACH_SUSPECT_MS) */
  suspectMs: number;
  /** Lease age after which an agent is OFFLINE. @default 30000 (env REACH_OFFLINE_MS) */
  offlineMs: number;
  /** How often the registry snapshot is written. @default 5000 (env REACH_SNAPSHOT_MS) */
  snapshotIntervalMs: number;
  /** How often leases are checked. @default 1000 (env REACH_SWEEP_MS) */
  sweepIntervalMs: number;
  /** How long a final task's state stays in Redis. @default 86400 (env REACH_TASK_RETENTION_S) */
  taskRetentionS: number;
  /** How long an idle callback topic is kept. @default 604800 (env REACH_CALLBACK_RETENTION_S) */
  callbackRetentionS: number;
  /** Approximate cap on entries per callback topic. @default 100000 (env REACH_CALLBACK_MAXLEN) */
  callbackMaxLen: number;
  /** Largest accepted request body in bytes. @default 65536 (env REACH_REGISTRY_BODY_LIMIT) */
  bodyLimitBytes: number;
  /** Name of this instance in consumer groups. @default hostname-pid (env REACH_INSTANCE_ID) */
  instanceId: string;
  /** Attempts in all before a task is dead-lettered. @default 4 (env REACH_MAX_ATTEMPTS) */
  maxAttempts: number;
  /** First retry backoff; doubles each attempt, ±20 % jitter. @default 2000 (env REACH_RETRY_BASE_MS) */
  retryBaseMs: number;
  /** Longest retry backoff. @default 120000 (env REACH_RETRY_CAP_MS) */
  retryCapMs: number;
  /** A task without a receipt this long after it was sent is retried. @default 30000 (env REACH_RECEIPT_TIMEOUT_MS) */
  receiptTimeoutMs: number;
  /** An agent whose inbox holds a task unread this long is SUSPECT, heartbeats or not. @default 10000 (env REACH_CONSUME_BOUND_MS) */
  consumeBoundMs: number;
  /** How often each live agent is sent a probe task through its inbox. @default 10000 (env REACH_PROBE_MS) */
  probeIntervalMs: number;
  /** A completion slower than this counts toward ejection. @default 3000 (env REACH_SLOW_MS) */
  slowMs: number;
  /** Per-capability slow thresholds, e.g. {"summarise": 20000}. @default {} (env REACH_SLOW_MS_BY_CAPABILITY, JSON) */
  slowMsByCapability: Record<string, number>;
  /** Consecutive slow completions that eject an agent. @default 5 */
  slowStreak: number;
  /** How long an ejected agent gets no tasks, seconds. @default 30 (env REACH_EJECT_S) */
  ejectS: number;
  /** Largest share of a capability's agents ejected at once. @default 0.5 (env REACH_EJECT_MAX_SHARE) */
  ejectMaxShare: number;
  /** How long dead letters are kept, seconds. @default 604800 (env REACH_DLQ_RETENTION_S) */
  dlqRetentionS: number;
  /** An assigned task still undelivered after this long is re-driven. @default 10000 (env REACH_DISPATCH_GRACE_MS) */
  dispatchGraceMs: number;
  /** A retry that finds no agent for this long is dead-lettered (no_agent). @default 300000 (env REACH_NO_AGENT_WAIT_MS) */
  noAgentWaitMs: number;
  /** An agent at or above this share of max_concurrency is skipped while another has room (retries route with it, as the router does). @default 0.85 (env REACH_WATERMARK) */
  watermark: number;
  /** @default 'info' (env LOG_LEVEL) */
  logLevel: string;
}

const EnvSchema = Type.Object({
  REGISTRY_PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379' }),
  REACH_PREFIX: Type.String({ default: DEFAULT_PREFIX, pattern: '^[A-Za-z0-9_.:-]{1,64}$' }),
  REACH_HEARTBEAT_MS: Type.Integer({ default: 5000, minimum: 50 }),
  REACH_SUSPECT_MS: Type.Integer({ default: 15000, minimum: 100 }),
  REACH_OFFLINE_MS: Type.Integer({ default: 30000, minimum: 200 }),
  REACH_SNAPSHOT_MS: Type.Integer({ default: 5000, minimum: 50 }),
  REACH_SWEEP_MS: Type.Integer({ default: 1000, minimum: 20 }),
  REACH_TASK_RETENTION_S: Type.Integer({ default: 86400, minimum: 1 }),
  REACH_CALLBACK_RETENTION_S: Type.Integer({ default: 604800, minimum: 1 }),
  REACH_CALLBACK_MAXLEN: Type.Integer({ default: 100000, minimum: 100 }),
  REACH_REGISTRY_BODY_LIMIT: Type.Integer({ default: 65536, minimum: 1024 }),
  REACH_INSTANCE_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' })),
  REACH_MAX_ATTEMPTS: Type.Integer({ default: 4, minimum: 1 }),
  REACH_RETRY_BASE_MS: Type.Integer({ default: 2000, minimum: 0 }),
  REACH_RETRY_CAP_MS: Type.Integer({ default: 120000, minimum: 0 }),
  REACH_RECEIPT_TIMEOUT_MS: Type.Integer({ default: 30000, minimum: 100 }),
  REACH_CONSUME_BOUND_MS: Type.Integer({ default: 10000, minimum: 100 }),
  REACH_PROBE_MS: Type.Integer({ default: 10000, minimum: 100 }),
  REACH_SLOW_MS: Type.Integer({ default: 3000, minimum: 1 }),
  REACH_SLOW_MS_BY_CAPABILITY: Type.String({ default: '{}' }),
  REACH_EJECT_S: Type.Integer({ default: 30, minimum: 1 }),
  REACH_EJECT_MAX_SHARE: Type.Number({ default: 0.5, minimum: 0, maximum: 1 }),
  REACH_DLQ_RETENTION_S: Type.Integer({ default: 604800, minimum: 1 }),
  REACH_DISPATCH_GRACE_MS: Type.Integer({ default: 10000, minimum: 100 }),
  REACH_NO_AGENT_WAIT_MS: Type.Integer({ default: 300000, minimum: 100 }),
  REACH_WATERMARK: Type.Number({ default: 0.85, exclusiveMinimum: 0, maximum: 1 }),
  LOG_LEVEL: Type.String({ default: 'info' }),
});

function slowMap(text: string): Record<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(
      'settings: REACH_SLOW_MS_BY_CAPABILITY must be a JSON object such as {"summarise": 20000}',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      'settings: REACH_SLOW_MS_BY_CAPABILITY must be a JSON object of capability → milliseconds',
    );
  }
  const out: Record<string, number> = {};
  for (const [cap, ms] of Object.entries(parsed)) {
    if (typeof ms !== 'number' || !(ms > 0))
      throw new Error(`settings: REACH_SLOW_MS_BY_CAPABILITY.${cap} must be a positive number`);
    out[cap] = ms;
  }
  return out;
}
type Env = Static<typeof EnvSchema>;

/** Reads and checks the environment; throws a message naming the bad variable. */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RegistryOptions> {
  const e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false });
  return {
    port: e.REGISTRY_PORT,
    host: e.HOST,
    redisUrl: e.REDIS_URL,
    prefix: e.REACH_PREFIX,
    heartbeatIntervalMs: e.REACH_HEARTBEAT_MS,
    suspectMs: e.REACH_SUSPECT_MS,
    offlineMs: e.REACH_OFFLINE_MS,
    snapshotIntervalMs: e.REACH_SNAPSHOT_MS,
    sweepIntervalMs: e.REACH_SWEEP_MS,
    taskRetentionS: e.REACH_TASK_RETENTION_S,
    callbackRetentionS: e.REACH_CALLBACK_RETENTION_S,
    callbackMaxLen: e.REACH_CALLBACK_MAXLEN,
    bodyLimitBytes: e.REACH_REGISTRY_BODY_LIMIT,
    maxAttempts: e.REACH_MAX_ATTEMPTS,
    retryBaseMs: e.REACH_RETRY_BASE_MS,
    retryCapMs: e.REACH_RETRY_CAP_MS,
    receiptTimeoutMs: e.REACH_RECEIPT_TIMEOUT_MS,
    consumeBoundMs: e.REACH_CONSUME_BOUND_MS,
    probeIntervalMs: e.REACH_PROBE_MS,
    slowMs: e.REACH_SLOW_MS,
    slowMsByCapability: slowMap(e.REACH_SLOW_MS_BY_CAPABILITY),
    ejectS: e.REACH_EJECT_S,
    ejectMaxShare: e.REACH_EJECT_MAX_SHARE,
    dlqRetentionS: e.REACH_DLQ_RETENTION_S,
    dispatchGraceMs: e.REACH_DISPATCH_GRACE_MS,
    noAgentWaitMs: e.REACH_NO_AGENT_WAIT_MS,
    watermark: e.REACH_WATERMARK,
    logLevel: e.LOG_LEVEL,
    ...(e.REACH_INSTANCE_ID ? { instanceId: e.REACH_INSTANCE_ID } : {}),
  };
}

/** Resolves settings once, filling defaults and checking that the lease bounds make sense. */
export function compileRegistryOptions(opts: Partial<RegistryOptions> = {}): RegistryOptions {
  const o: RegistryOptions = {
    port: 8080,
    host: '0.0.0.0',
    redisUrl: 'redis://127.0.0.1:6379',
    prefix: DEFAULT_PREFIX,
    heartbeatIntervalMs: 5000,
    suspectMs: 15000,
    offlineMs: 30000,
    snapshotIntervalMs: 5000,
    sweepIntervalMs: 1000,
    taskRetentionS: 86400,
    callbackRetentionS: 604800,
    callbackMaxLen: 100000,
    bodyLimitBytes: 65536,
    instanceId: `sync-${process.pid}`,
    maxAttempts: 4,
    retryBaseMs: 2000,
    retryCapMs: 120000,
    receiptTimeoutMs: 30000,
    consumeBoundMs: 10000,
    probeIntervalMs: 10000,
    slowMs: 3000,
    slowMsByCapability: {},
    slowStreak: 5,
    ejectS: 30,
    ejectMaxShare: 0.5,
    dlqRetentionS: 604800,
    dispatchGraceMs: 10000,
    noAgentWaitMs: 300000,
    watermark: 0.85,
    logLevel: 'info',
    ...opts,
  };
  if (!(o.heartbeatIntervalMs < o.suspectMs && o.suspectMs < o.offlineMs)) {
    throw new Error(
      `settings: need REACH_HEARTBEAT_MS < REACH_SUSPECT_MS < REACH_OFFLINE_MS, got ${o.heartbeatIntervalMs} / ${o.suspectMs} / ${o.offlineMs}`,
    );
  }
  return o;
}
