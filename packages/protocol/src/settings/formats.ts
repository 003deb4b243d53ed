/**
 * The value formats settings use beyond numbers and plain strings, each with the message that
 * names the variable when a value is malformed. Used by the settings tables' rows; also by the
 * code that reads the same kind of value elsewhere (the stats API's windows).
 */

/**
 * The ports the services and the data stores listen on unless told otherwise: the router
 * (callers' side), registry-sync (agents' side), Redis, and the InfluxDB `npm start` runs.
 */
export const DEFAULT_PORTS = {
  router: 8081,
  registry: 8080,
  relay: 8082,
  redis: 6379,
  influx: 8086,
} as const;

/** The key prefix pattern (`REACH_PREFIX`); `reachKeys` refuses any other. */
export const PREFIX_PATTERN = '^[A-Za-z0-9_.:-]{1,64}$';

/** Pattern of a window: a positive integer and a unit, `s`, `m`, `h`, `d` or `w` (InfluxQL durations). */
export const WINDOW_PATTERN = '^[1-9][0-9]{0,6}[smhdw]$';

/**
 * A setting that lists host names (REACH_CARD_HOSTS, REACH_A2A_PUSH_HOSTS): comma-separated host
 * names, no scheme, port or path; lower-cased, blanks dropped.
 * @throws an Error naming `setting` for anything that is not a host name
 */
export function hostListFrom(text: string, setting: string): string[] {
  const hosts = text
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (const host of hosts)
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(host))
      throw new Error(
        `settings: ${setting} holds ${JSON.stringify(host)}; give host names only, comma-separated (e.g. hooks.example.com,agents.internal)`,
      );
  return hosts;
}

/**
 * A setting that lists browser origins (REACH_ALLOWED_ORIGINS): comma-separated
 * `http(s)://host[:port]`, no path; lower-cased, blanks dropped.
 * @throws an Error naming `setting` for anything that is not an origin
 */
export function originListFrom(text: string, setting: string): string[] {
  const origins = text
    .split(',')
    .map((o) => o.trim().toLowerCase().replace(/\/+$/, ''))
    .filter((o) => o !== '');
  for (const origin of origins)
    if (!/^https?:\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?$/.test(origin))
      throw new Error(
        `settings: ${setting} holds ${JSON.stringify(origin)}; give origins only, comma-separated (e.g. https://console.example.com,http://localhost:5173)`,
      );
  return origins;
}

/**
 * A setting that lists proxy addresses (REACH_TRUSTED_PROXIES): comma-separated IPv4 or IPv6
 * addresses or CIDR ranges (`10.0.0.0/8`), as fastify's `trustProxy` takes them.
 * @throws an Error naming `setting` for anything that is not an address or range
 */
export function proxyListFrom(text: string, setting: string): string[] {
  const proxies = text
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== '');
  for (const proxy of proxies)
    if (!/^([0-9]{1,3}(\.[0-9]{1,3}){3}|[0-9a-f:]*:[0-9a-f:.]*)(\/[0-9]{1,3})?$/.test(proxy))
      throw new Error(
        `settings: ${setting} holds ${JSON.stringify(proxy)}; give addresses or CIDR ranges only, comma-separated (e.g. 127.0.0.1,10.0.0.0/8)`,
      );
  return proxies;
}

/** A JSON object of `setting`, or an Error naming it with `example`. */
function jsonObject(text: string, setting: string, example: string, what: string): object {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`settings: ${setting} must be a JSON object such as ${example}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`settings: ${setting} must be a JSON object of ${what}`);
  return parsed;
}

/**
 * A JSON object of capability → milliseconds, each positive (REACH_SLOW_MS_BY_CAPABILITY,
 * REACH_EXEC_LEASE_MS_BY_CAPABILITY).
 * @throws an Error naming `setting` and, for a bad value, the capability
 */
export function capabilityMsFrom(text: string, setting: string): Record<string, number> {
  const parsed = jsonObject(text, setting, '{"summarise": 20000}', 'capability → milliseconds');
  const out: Record<string, number> = {};
  for (const [cap, ms] of Object.entries(parsed)) {
    if (typeof ms !== 'number' || !(ms > 0))
      throw new Error(`settings: ${setting}.${cap} must be a positive number`);
    out[cap] = ms;
  }
  return out;
}

/**
 * A JSON object of capability → `true` or `false` (REACH_ARCHIVE_PAYLOADS_BY_CAPABILITY).
 * @throws an Error naming `setting` and, for a bad value, the capability
 */
export function capabilityFlagsFrom(text: string, setting: string): Record<string, boolean> {
  const parsed = jsonObject(text, setting, '{"kyc-check": false}', 'capability → true|false');
  const out: Record<string, boolean> = {};
  for (const [cap, flag] of Object.entries(parsed)) {
    if (typeof flag !== 'boolean')
      throw new Error(`settings: ${setting}.${cap} must be true or false`);
    out[cap] = flag;
  }
  return out;
}

/**
 * A JSON object of capability → whole seconds, each from 1 to 7 days (REACH_QUEUE_DEADLINES).
 * @throws an Error naming `setting` and, for a bad value, the capability
 */
export function capabilitySecondsFrom(text: string, setting: string): Record<string, number> {
  const parsed = jsonObject(text, setting, '{"summarise": 600}', 'capability → seconds');
  const out: Record<string, number> = {};
  for (const [cap, s] of Object.entries(parsed)) {
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 1 || s > 7 * 24 * 3600)
      throw new Error(`settings: ${setting}.${cap} must be whole seconds from 1 to 604800`);
    out[cap] = s;
  }
  return out;
}

/** What a capability does when every agent of it is at capacity (REACH_BACKPRESSURE). */
export type BackpressureMode = 'queue' | 'reject';

/**
 * A JSON object of capability → `"queue"` or `"reject"` (REACH_BACKPRESSURE).
 * @throws an Error naming `setting` and, for a bad value, the capability
 */
export function backpressureFrom(text: string, setting: string): Record<string, BackpressureMode> {
  const parsed = jsonObject(text, setting, '{"embed": "queue"}', 'capability → "queue" | "reject"');
  const out: Record<string, BackpressureMode> = {};
  for (const [cap, mode] of Object.entries(parsed as Record<string, unknown>)) {
    if (mode !== 'queue' && mode !== 'reject')
      throw new Error(`settings: ${setting}.${cap} must be "queue" or "reject"`);
    out[cap] = mode;
  }
  return out;
}
