import type { SettingsTable } from './define.ts';
import { DEFAULT_PORTS } from './formats.ts';
import { SHARED_SETTINGS } from './shared.ts';

/**
 * What the programs that talk to the services read: agents and callers through the SDKs (the
 * TypeScript worker-sdk and sdks/python), the `reach` CLI, the example agents and `npm start`'s
 * demo agents. One spelling each; the earlier ones in `deprecated` are still read for one
 * release, with a one-line warning naming the new one. sdks/python reads a copy generated from
 * this table (`npm run docs:settings -w @agent-reach/protocol`).
 */
export const CLIENT_SETTINGS = {
  apiKey: {
    env: 'REACH_KEY',
    type: 'string',
    deprecated: ['REACH_API_KEY'],
    essential: true,
    doc: 'The API key the SDKs and the CLI send as `Authorization: Bearer` (docs/SECURITY.md); unset while keys are off.',
  },
  routerUrl: {
    env: 'REACH_ROUTER_URL',
    type: 'string',
    format: 'URL',
    default: `http://127.0.0.1:${DEFAULT_PORTS.router}`,
    deprecated: ['ROUTER_URL'],
    essential: true,
    doc: 'Base URL of a router, or of the load balancer in front of several: where tasks are submitted.',
  },
  registryUrl: {
    env: 'REACH_REGISTRY_URL',
    type: 'string',
    format: 'URL',
    default: `http://127.0.0.1:${DEFAULT_PORTS.registry}`,
    deprecated: ['REGISTRY_URL'],
    essential: true,
    doc: 'Base URL of registry-sync: where agents register and heartbeat.',
  },
  agentId: {
    env: 'REACH_AGENT_ID',
    type: 'string',
    deprecated: ['AGENT_ID'],
    doc: 'The stable name of the example agents and of `npm start`’s demo agents (an SDK agent takes it as an option).',
  },
  redisUrl: {
    ...SHARED_SETTINGS.redisUrl,
    essential: undefined,
    doc: 'The Redis an agent reads its tasks from and writes its acks to; the services’ `REDIS_URL`.',
  },
} as const satisfies SettingsTable;

/** A setting of {@link CLIENT_SETTINGS}. */
export type ClientSettingName = keyof typeof CLIENT_SETTINGS;

/** The defaults of the client settings that have one. */
export const CLIENT_DEFAULTS = {
  routerUrl: CLIENT_SETTINGS.routerUrl.default,
  registryUrl: CLIENT_SETTINGS.registryUrl.default,
  redisUrl: CLIENT_SETTINGS.redisUrl.default,
} as const;

/** Called when a setting was found under a deprecated spelling. */
export type OnDeprecatedSetting = (deprecated: string, current: string) => void;

/** The one line a program prints for a setting given under its deprecated spelling. */
export function deprecatedSettingMessage(deprecated: string, current: string): string {
  return `${deprecated} is deprecated and will be ignored from the next release: set ${current} instead`;
}

/**
 * The value of a client setting in `env`: its variable, else one of its deprecated spellings
 * (reported to `onDeprecated`, which prints the warning), else undefined. Blank counts as unset
 * (`npm start` blanks what its children must not inherit); the value is trimmed.
 */
export function clientSetting(
  name: ClientSettingName,
  env: Readonly<Record<string, string | undefined>>,
  onDeprecated: OnDeprecatedSetting,
): string | undefined {
  const row: { env: string; deprecated?: readonly string[] } = CLIENT_SETTINGS[name];
  const value = env[row.env]?.trim();
  if (value) return value;
  for (const old of row.deprecated ?? []) {
    const earlier = env[old]?.trim();
    if (!earlier) continue;
    onDeprecated(old, row.env);
    return earlier;
  }
  return undefined;
}
