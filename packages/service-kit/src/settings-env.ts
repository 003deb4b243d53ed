import { envSchema } from 'env-schema';
import {
  envSchemaOf,
  optionsFromCheckedEnv,
  setOnly,
  type OptionsOf,
  type SettingsTable,
} from '@agent-reach/protocol';
import { redisExtrasFromEnv, type RedisConnectionExtras } from './redis-connection.ts';

/** The options a service reads from its environment: its tables' and the Redis extras. */
export type ServiceOptionsFromEnv<T> = Partial<OptionsOf<T>> & {
  redisConnection?: RedisConnectionExtras;
};

/** Each table's environment schema, made once. */
const schemas = new WeakMap<SettingsTable, ReturnType<typeof envSchemaOf>>();

/**
 * A service's options from `env` (never from anywhere else): each variable of `table` checked
 * and coerced against its row (env-schema: a bad one throws a message naming it, several are
 * named in the table's order), then turned into its option, plus the Redis connection extras
 * (REDIS_TLS_*, credentials, Sentinel, cluster nodes). Only the variables that are set appear:
 * the service's compile step fills in the defaults, so it can tell a value given from a default.
 */
export function serviceOptionsFromEnv<T extends SettingsTable>(
  table: T,
  env: NodeJS.ProcessEnv,
): ServiceOptionsFromEnv<T> {
  let schema = schemas.get(table);
  if (!schema) schemas.set(table, (schema = envSchemaOf(table)));
  const checked = envSchema<Record<string, unknown>>({
    schema,
    data: env,
    env: false,
    dotenv: false,
  });
  return setOnly({
    ...optionsFromCheckedEnv(table, checked),
    redisConnection: redisExtrasFromEnv(env),
  }) as ServiceOptionsFromEnv<T>;
}
