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
  LOG_LEVEL: Type.String({ default: 'info' }),
});
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
