import { randomBytes } from 'node:crypto';
import { serviceOptionsFromEnv, type RedisConnectionExtras } from '@agent-reach/service-kit';
import { defaultsOf, RELAY_SETTINGS, SHARED_SETTINGS, type OptionsOf } from '@agent-reach/protocol';

/** The relay reads the Redis rows of the shared table and its own (docs/SETTINGS.md, Relay). */
const TABLE = {
  host: SHARED_SETTINGS.host,
  redisUrl: SHARED_SETTINGS.redisUrl,
  prefix: SHARED_SETTINGS.prefix,
  logLevel: SHARED_SETTINGS.logLevel,
  ...RELAY_SETTINGS,
};

/** Settings of a relay, a field per row (docs/SETTINGS.md). */
export type RelayOptions = Omit<OptionsOf<typeof TABLE>, 'relayId' | 'relayKey'> & {
  /** Name in the membership set (REACH_RELAY_ID). @default `relay-<pid>-<random>` */
  relayId: string;
  /** API key for registry-sync (REACH_RELAY_KEY); unset while keys are off. */
  relayKey?: string;
  /** TLS files, credentials, sentinels and cluster nodes besides the URL. */
  redisConnection?: RedisConnectionExtras;
};

/** Reads and checks `env`; throws a message naming a bad variable. Only set variables appear. */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<RelayOptions> {
  return serviceOptionsFromEnv(TABLE, env);
}

/** Fills defaults and checks that the intervals make sense. */
export function compileRelayOptions(opts: Partial<RelayOptions> = {}): RelayOptions {
  const o: RelayOptions = {
    ...defaultsOf(TABLE),
    relayId: `relay-${process.pid}-${randomBytes(3).toString('hex')}`,
    ...opts,
  };
  if (!URL.canParse(o.registryUrl) || !/^https?:$/.test(new URL(o.registryUrl).protocol))
    throw new Error(
      `settings: REACH_RELAY_REGISTRY_URL must be an http(s) URL such as http://127.0.0.1:8080, got ${JSON.stringify(o.registryUrl)}`,
    );
  if (o.checkIntervalMs < o.probeIntervalMs)
    throw new Error(
      `settings: need REACH_ENDPOINT_PROBE_MS <= REACH_ENDPOINT_CHECK_MS, got ${o.probeIntervalMs} / ${o.checkIntervalMs}`,
    );
  return o;
}
