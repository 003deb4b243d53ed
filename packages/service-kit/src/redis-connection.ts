/**
 * One way to reach Redis for every process of Agent-Reach: a URL (`redis://` or `rediss://`),
 * TLS files, credentials and, optionally, Sentinel. Only ioredis and node:fs are imported here, so
 * the worker-sdk bundles this module (`@agent-reach/service-kit/redis`) without the HTTP side.
 */
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';

/** How to reach Redis, besides the URL. Every field is optional. */
export interface RedisConnectionExtras {
  /** PEM file of the CA that signed the server's certificate (env REDIS_TLS_CA). */
  tlsCaFile?: string;
  /** PEM file of this client's certificate, for servers that ask for one (env REDIS_TLS_CERT). */
  tlsCertFile?: string;
  /** PEM file of this client's private key (env REDIS_TLS_KEY). */
  tlsKeyFile?: string;
  /** ACL user; wins over the URL's (env REDIS_USERNAME). */
  username?: string;
  /** Password; wins over the URL's (env REDIS_PASSWORD). */
  password?: string;
  /**
   * Sentinels to ask for the master (env REDIS_SENTINELS, `host:port,host:port`). The URL then
   * gives only the scheme (TLS for master and sentinels alike), credentials and database.
   */
  sentinels?: readonly { host: string; port: number }[];
  /** The master's name at the sentinels (env REDIS_SENTINEL_NAME) @default 'mymaster' */
  sentinelName?: string;
}

/** A Redis to connect to: the URL plus {@link RedisConnectionExtras}. */
export interface RedisConnectionSettings extends RedisConnectionExtras {
  /** `redis://[user:password@]host[:port][/db]`, `rediss://…` for TLS, or a Unix socket's path. */
  url: string;
}

/** The environment variables read by {@link redisExtrasFromEnv}. */
export const REDIS_ENV_VARIABLES = [
  'REDIS_TLS_CA',
  'REDIS_TLS_CERT',
  'REDIS_TLS_KEY',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
] as const;

/**
 * Reads REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY, REDIS_USERNAME, REDIS_PASSWORD,
 * REDIS_SENTINELS and REDIS_SENTINEL_NAME; undefined when none is set. Throws a message naming the
 * variable when one is malformed. Files are read when a connection is made, not here.
 */
export function redisExtrasFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): RedisConnectionExtras | undefined {
  const get = (name: (typeof REDIS_ENV_VARIABLES)[number]) => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const extras: RedisConnectionExtras = {};
  const ca = get('REDIS_TLS_CA');
  const cert = get('REDIS_TLS_CERT');
  const key = get('REDIS_TLS_KEY');
  if ((cert === undefined) !== (key === undefined))
    throw new Error('settings: REDIS_TLS_CERT and REDIS_TLS_KEY go together (set both or neither)');
  if (ca !== undefined) extras.tlsCaFile = ca;
  if (cert !== undefined) extras.tlsCertFile = cert;
  if (key !== undefined) extras.tlsKeyFile = key;
  const username = get('REDIS_USERNAME');
  const password = get('REDIS_PASSWORD');
  if (username !== undefined) extras.username = username;
  if (password !== undefined) extras.password = password;
  const sentinels = get('REDIS_SENTINELS');
  if (sentinels !== undefined) extras.sentinels = parseSentinels(sentinels);
  const name = get('REDIS_SENTINEL_NAME');
  if (name !== undefined) extras.sentinelName = name;
  return Object.keys(extras).length > 0 ? extras : undefined;
}

/** `host:port,host:port` → sentinel addresses; throws naming REDIS_SENTINELS. */
export function parseSentinels(text: string): { host: string; port: number }[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(part);
    const port = Number(m?.[2]);
    if (!m?.[1] || !(port > 0 && port < 65536))
      throw new Error(`settings: REDIS_SENTINELS must be host:port[,host:port…], got "${part}"`);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

function readPem(path: string, variable: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err: unknown) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`settings: ${variable}=${path} cannot be read (${code})`, { cause: err });
  }
}

/**
 * The ioredis options for `settings`, `overrides` applied last (connection behaviour, or the
 * credentials an agent was issued, which win over REDIS_USERNAME/REDIS_PASSWORD and the URL's).
 * Reads the TLS files; throws a message naming the variable when one cannot be read.
 */
export function redisOptionsFor(
  settings: RedisConnectionSettings,
  overrides: RedisOptions = {},
): RedisOptions {
  if (settings.url.startsWith('/')) {
    // A Unix socket path, as ioredis takes it; credentials from the settings only.
    const socket: RedisOptions = { path: settings.url };
    if (settings.username !== undefined) socket.username = settings.username;
    if (settings.password !== undefined) socket.password = settings.password;
    return { ...socket, ...overrides };
  }
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    throw new Error(`settings: REDIS_URL is not a URL: ${redactUrl(settings.url)}`);
  }
  const secure = url.protocol === 'rediss:';
  if (!secure && url.protocol !== 'redis:')
    throw new Error(`settings: REDIS_URL must start with redis:// or rediss://`);
  const options: RedisOptions = {};
  if (url.username) options.username = decodeURIComponent(url.username);
  if (url.password) options.password = decodeURIComponent(url.password);
  if (settings.username !== undefined) options.username = settings.username;
  if (settings.password !== undefined) options.password = settings.password;
  const db = url.pathname.replace(/^\//, '');
  if (db !== '') {
    if (!/^\d{1,5}$/.test(db)) throw new Error(`settings: REDIS_URL's database must be a number`);
    options.db = Number(db);
  }
  const tls = secure
    ? {
        ...(settings.tlsCaFile ? { ca: readPem(settings.tlsCaFile, 'REDIS_TLS_CA') } : {}),
        ...(settings.tlsCertFile ? { cert: readPem(settings.tlsCertFile, 'REDIS_TLS_CERT') } : {}),
        ...(settings.tlsKeyFile ? { key: readPem(settings.tlsKeyFile, 'REDIS_TLS_KEY') } : {}),
      }
    : undefined;
  if (!secure && (settings.tlsCaFile || settings.tlsCertFile || settings.tlsKeyFile))
    throw new Error('settings: REDIS_TLS_* are set but REDIS_URL is redis://; use rediss://');
  if (settings.sentinels?.length) {
    options.sentinels = settings.sentinels.map((s) => ({ host: s.host, port: s.port }));
    options.name = settings.sentinelName ?? 'mymaster';
    if (tls) {
      options.tls = tls;
      options.sentinelTLS = tls;
      options.enableTLSForSentinelMode = true;
    }
  } else {
    options.host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
    options.port = url.port ? Number(url.port) : 6379;
    if (tls) options.tls = tls;
  }
  return { ...options, ...overrides };
}

/** A new ioredis client for `settings` (see {@link redisOptionsFor} for `overrides`). */
export function createRedis(
  settings: RedisConnectionSettings,
  overrides: RedisOptions = {},
): Redis {
  return new Redis(redisOptionsFor(settings, overrides));
}

/** `url` with its password replaced by `***`, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}
