import { serviceOptionsFromEnv, type RedisConnectionExtras } from '@agent-reach/service-kit';
import {
  defaultsOf,
  ROUTER_SETTINGS,
  SHARED_SETTINGS,
  type DefaultsOf,
  type OptionsOf,
} from '@agent-reach/protocol';

/**
 * The router's settings: the rows of `SHARED_SETTINGS` and `ROUTER_SETTINGS` (packages/protocol,
 * docs/SETTINGS.md), one environment variable each.
 */
const TABLE = { ...SHARED_SETTINGS, ...ROUTER_SETTINGS };

/**
 * Settings of the router, a field per row of its tables (docs/SETTINGS.md has each one's
 * variable, default, bounds and meaning); the defaults are {@link ROUTER_DEFAULTS}. Those the
 * table marks `published: 'followed'` are registry-sync's: once it has published them
 * (`keys.settings()`), the router uses its values over these and warns at start-up about one set
 * here that differs (see `SharedSettings`).
 */
export type RouterOptions = OptionsOf<typeof TABLE> & {
  /**
   * TLS files, credentials and sentinels besides the URL (REDIS_TLS_*, REDIS_USERNAME,
   * REDIS_PASSWORD, REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_CLUSTER_NODES).
   * @default undefined (the URL alone)
   */
  redisConnection?: RedisConnectionExtras;
};

/** Every default of {@link RouterOptions}, from its tables. */
export const ROUTER_DEFAULTS: Readonly<DefaultsOf<typeof TABLE>> = Object.freeze(defaultsOf(TABLE));

/**
 * Reads and checks `env`; throws a message naming the bad variable. Only the variables that are
 * set appear in the result (no defaults in the schema, so that the service can tell a value it
 * was given from a default); compileRouterOptions fills in the rest.
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RouterOptions> {
  return serviceOptionsFromEnv(TABLE, env);
}

/** Resolves settings once, filling defaults. */
export function compileRouterOptions(opts: Partial<RouterOptions> = {}): RouterOptions {
  return { ...defaultsOf(TABLE), ...opts };
}
