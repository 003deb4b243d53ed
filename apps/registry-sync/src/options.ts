import { serviceOptionsFromEnv, type RedisConnectionExtras } from '@agent-reach/service-kit';
import {
  defaultsOf,
  REGISTRY_SETTINGS,
  SHARED_SETTINGS,
  type DefaultsOf,
  type OptionsOf,
} from '@agent-reach/protocol';

/**
 * registry-sync's settings: the rows of `SHARED_SETTINGS` and `REGISTRY_SETTINGS`
 * (packages/protocol, docs/SETTINGS.md), one environment variable each.
 */
const TABLE = { ...SHARED_SETTINGS, ...REGISTRY_SETTINGS };

/**
 * Settings of registry-sync, a field per row of its tables (docs/SETTINGS.md has each one's
 * variable, default, bounds and meaning); the defaults are {@link REGISTRY_DEFAULTS}. Those the
 * tables mark `published` are written to Redis (`keys.settings()`, see `PUBLISHED_SETTINGS`) at
 * start-up and with every snapshot, and routers use them over their own.
 */
export type RegistryOptions = Omit<OptionsOf<typeof TABLE>, 'instanceId'> & {
  /** Name of this instance in consumer groups (REACH_INSTANCE_ID). @default `sync-<pid>` */
  instanceId: string;
  /**
   * TLS files, credentials and sentinels besides the URL (REDIS_TLS_*, REDIS_USERNAME,
   * REDIS_PASSWORD, REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_CLUSTER_NODES).
   * @default undefined (the URL alone)
   */
  redisConnection?: RedisConnectionExtras;
};

/** Every default of {@link RegistryOptions} but `instanceId`, from its tables. */
export const REGISTRY_DEFAULTS: Readonly<DefaultsOf<typeof TABLE>> = Object.freeze(
  defaultsOf(TABLE),
);

/**
 * Reads and checks `env`; throws a message naming the bad variable. Only the variables that are
 * set appear in the result (no defaults in the schema, so that the service can tell a value it
 * was given from a default); compileRegistryOptions fills in the rest.
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RegistryOptions> {
  return serviceOptionsFromEnv(TABLE, env);
}

/** Resolves settings once, filling defaults and checking that the lease bounds make sense. */
export function compileRegistryOptions(opts: Partial<RegistryOptions> = {}): RegistryOptions {
  const o: RegistryOptions = { ...defaultsOf(TABLE), instanceId: `sync-${process.pid}`, ...opts };
  if (!(o.heartbeatIntervalMs < o.suspectMs && o.suspectMs < o.offlineMs)) {
    throw new Error(
      `settings: need REACH_HEARTBEAT_MS < REACH_SUSPECT_MS < REACH_OFFLINE_MS, got ${o.heartbeatIntervalMs} / ${o.suspectMs} / ${o.offlineMs}`,
    );
  }
  return o;
}
