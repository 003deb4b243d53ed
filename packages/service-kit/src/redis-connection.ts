/**
 * One way to reach Redis for every process of Agent-Reach: a URL (`redis://` or `rediss://`),
 * TLS files, credentials and, optionally, Sentinel or a Redis Cluster's seed nodes. Only ioredis,
 * node:fs and the protocol (for the settings' defaults) are imported here, so the worker-sdk
 * bundles this module (`@agent-reach/service-kit/redis`) without the HTTP side.
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { DEFAULT_PORTS, SHARED_SETTINGS } from '@agent-reach/protocol';
import { keySlot } from './key-slot.ts';

export { groupBySlot, keySlot } from './key-slot.ts';

/**
 * The one client type of the codebase: a connection to a standalone (or Sentinel-managed) Redis,
 * or ioredis' Cluster client. Both take the same commands, pipelines and scripts; code that needs
 * the difference (a node's own connection, `duplicate()`) goes through the helpers here.
 */
export type RedisClient = Redis | Cluster;

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
  /**
   * Seed nodes of a Redis Cluster (env REDIS_CLUSTER_NODES, `host:port,host:port`): given, every
   * connection is ioredis' Cluster client, and the URL gives only the scheme (`rediss://` for
   * TLS) and credentials. REDIS_TLS_* alone also turn TLS on for the cluster's nodes.
   */
  clusterNodes?: readonly { host: string; port: number }[];
}

/** A Redis to connect to: the URL plus {@link RedisConnectionExtras}. */
export interface RedisConnectionSettings extends RedisConnectionExtras {
  /** `redis://[user:password@]host[:port][/db]`, `rediss://…` for TLS, or a Unix socket's path. */
  url: string;
}

/**
 * The environment variables read by {@link redisExtrasFromEnv}: the rows of `SHARED_SETTINGS`
 * (packages/protocol) read by it, which docs/SETTINGS.md describes.
 */
export const REDIS_ENV_VARIABLES = [
  'REDIS_TLS_CA',
  'REDIS_TLS_CERT',
  'REDIS_TLS_KEY',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_CLUSTER_NODES',
] as const;

/**
 * Reads REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY, REDIS_USERNAME, REDIS_PASSWORD,
 * REDIS_SENTINELS, REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES; undefined when none is set. Throws a message naming the
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
  const cluster = get('REDIS_CLUSTER_NODES');
  if (cluster !== undefined) extras.clusterNodes = parseHostPorts(cluster, 'REDIS_CLUSTER_NODES');
  if (extras.clusterNodes && extras.sentinels)
    throw new Error('settings: REDIS_CLUSTER_NODES and REDIS_SENTINELS exclude each other');
  return Object.keys(extras).length > 0 ? extras : undefined;
}

/** `host:port,host:port` → sentinel addresses; throws naming REDIS_SENTINELS. */
export function parseSentinels(text: string): { host: string; port: number }[] {
  return parseHostPorts(text, 'REDIS_SENTINELS');
}

/** `host:port,host:port` → addresses; throws naming `variable`. */
export function parseHostPorts(text: string, variable: string): { host: string; port: number }[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(part);
    const port = Number(m?.[2]);
    if (!m?.[1] || !(port > 0 && port < 65536))
      throw new Error(`settings: ${variable} must be host:port[,host:port…], got "${part}"`);
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
  if (url.protocol !== 'rediss:' && url.protocol !== 'redis:')
    throw new Error(`settings: REDIS_URL must start with redis:// or rediss://`);
  const tlsFiles = Boolean(settings.tlsCaFile || settings.tlsCertFile || settings.tlsKeyFile);
  // A cluster's nodes are named by REDIS_CLUSTER_NODES, so REDIS_TLS_* alone can ask for TLS.
  const secure = url.protocol === 'rediss:' || (tlsFiles && Boolean(settings.clusterNodes?.length));
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
  if (!secure && tlsFiles)
    throw new Error('settings: REDIS_TLS_* are set but REDIS_URL is redis://; use rediss://');
  if (settings.sentinels?.length) {
    options.sentinels = settings.sentinels.map((s) => ({ host: s.host, port: s.port }));
    options.name = settings.sentinelName ?? SHARED_SETTINGS.redisSentinelName.default;
    if (tls) {
      options.tls = tls;
      options.sentinelTLS = tls;
      options.enableTLSForSentinelMode = true;
    }
  } else {
    options.host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
    options.port = url.port ? Number(url.port) : DEFAULT_PORTS.redis;
    if (tls) options.tls = tls;
  }
  return { ...options, ...overrides };
}

/**
 * Options that belong to ioredis' Cluster client itself; every other option of `overrides` goes
 * to each node's connection (`redisOptions`). `retryStrategy` becomes `clusterRetryStrategy`.
 */
const CLUSTER_LEVEL = [
  'lazyConnect',
  'enableAutoPipelining',
  'autoPipeliningIgnoredCommands',
  'enableOfflineQueue',
  'enableReadyCheck',
] as const;

/**
 * The ioredis Cluster options for `settings` (which must name `clusterNodes`), with `overrides`
 * applied as {@link redisOptionsFor} does: writes and reads go to masters; MOVED is followed at
 * once, ASK too, and TRYAGAIN, CLUSTERDOWN and a failover are retried after 100 ms up to 16
 * redirections; the slot map is refreshed every 5 s so a failover or a reshard is seen without a
 * failed command.
 */
export function clusterOptionsFor(
  settings: RedisConnectionSettings,
  overrides: RedisOptions = {},
): ClusterOptions {
  const all = redisOptionsFor({ ...settings, sentinels: [] }, overrides);
  if (all.db !== undefined && all.db !== 0)
    throw new Error(`settings: REDIS_URL's database must be 0 (or none) with REDIS_CLUSTER_NODES`);
  const {
    host: _host,
    port: _port,
    path: _path,
    db: _db,
    sentinels: _sentinels,
    name: _name,
    readOnly: _readOnly,
    retryStrategy,
    ...rest
  } = all;
  const cluster: ClusterOptions = {};
  const node: RedisOptions = { ...rest };
  for (const k of CLUSTER_LEVEL) {
    if (rest[k] === undefined) continue;
    Object.assign(cluster, { [k]: rest[k] });

    delete node[k];
  }
  return {
    scaleReads: 'master',
    maxRedirections: 16,
    retryDelayOnMoved: 0,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: 5000,
    ...cluster,
    // Off whatever the caller asked: ioredis batches auto-pipelined commands by the nodes serving
    // their slots and refuses the whole batch when its slot map moved meanwhile (a MOVED after a
    // failover rewrites one slot's entry only), failing every command in it with "All keys in the
    // pipeline should belong to the same slots allocation group".
    enableAutoPipelining: false,
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    redisOptions: node,
  };
}

/**
 * A new ioredis client for `settings` (see {@link redisOptionsFor} for `overrides`): the Cluster
 * client when `settings.clusterNodes` is given (see {@link clusterOptionsFor}), else a connection.
 */
export function createRedis(
  settings: RedisConnectionSettings,
  overrides: RedisOptions = {},
): RedisClient {
  const nodes = settings.clusterNodes;
  if (nodes?.length)
    return new Cluster(
      nodes.map((n) => ({ host: n.host, port: n.port })),
      clusterOptionsFor(settings, overrides),
    );
  return new Redis(redisOptionsFor(settings, overrides));
}

/**
 * A connection of its own beside `client`, with the same settings and `overrides` (a blocking
 * read, a subscriber): `duplicate()` of either client type.
 */
export function duplicateRedis(client: RedisClient, overrides: RedisOptions = {}): RedisClient {
  if (!(client instanceof Cluster)) return client.duplicate(overrides);
  const { retryStrategy, ...rest } = overrides;
  const cluster: ClusterOptions = {};
  const node: RedisOptions = { ...client.options.redisOptions, ...rest };
  for (const k of CLUSTER_LEVEL) {
    if (rest[k] === undefined) continue;
    Object.assign(cluster, { [k]: rest[k] });

    delete node[k];
  }
  return client.duplicate(undefined, {
    ...cluster,
    enableAutoPipelining: false, // as in clusterOptionsFor
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    redisOptions: node,
  });
}

/** True for ioredis' Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** Where `settings` point, for messages: the cluster's seeds, the sentinels, or the URL (redacted). */
export function describeRedis(settings: RedisConnectionSettings): string {
  const list = (nodes: readonly { host: string; port: number }[]) =>
    nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  if (settings.clusterNodes?.length) return `REDIS_CLUSTER_NODES=${list(settings.clusterNodes)}`;
  if (settings.sentinels?.length) return `REDIS_SENTINELS=${list(settings.sentinels)}`;
  return `REDIS_URL=${redactUrl(settings.url)}`;
}

/**
 * Waits until `client` is ready, connecting it if it was made with `lazyConnect`, for at most
 * `timeoutMs`: a Redis that is briefly away at start-up is waited for (the client's own retry
 * strategy reconnects meanwhile). Past the deadline the client is disconnected and the error
 * names the address (`describeRedis(settings)`) and the last connection error.
 */
export async function connectRedis(
  client: RedisClient,
  settings: RedisConnectionSettings,
  timeoutMs = 10_000,
): Promise<void> {
  if (client.status === 'ready') return;
  let lastError: unknown;
  const onError = (err: unknown) => {
    lastError = err;
  };
  client.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  let onReady: (() => void) | undefined;
  try {
    const ready = new Promise<boolean>((resolve) => {
      onReady = () => resolve(true);
      client.once('ready', onReady);
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    if (client.status === 'wait') client.connect().catch(onError);
    if (await ready) return;
    client.disconnect();
    const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
    // The last error's text is in the message (not as `cause`, which loggers would print twice).
    throw new Error(
      `Redis at ${describeRedis(settings)} did not answer within ${Math.round(timeoutMs / 1000)} s${cause}`,
    );
  } finally {
    clearTimeout(timer);
    if (onReady) client.off('ready', onReady);
    client.off('error', onError);
  }
}

/** `url` with its password replaced by `***`, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

/**
 * The connection of `cluster` to the master that holds `key`'s slot, by the client's current
 * slot map; undefined before the map is known. For commands that must reach one node's own
 * connection, such as `CLIENT ID` of the connection that runs a blocking read there.
 */
export function clusterNodeOf(cluster: Cluster, key: string): Redis | undefined {
  const address = cluster.slots[keySlot(key)]?.[0];
  if (address === undefined) return undefined;
  return cluster
    .nodes('master')
    .find((n) => `${n.options.host ?? ''}:${n.options.port ?? ''}` === address);
}
export { SlotPipeline, slotPipeline, type PipelineReply } from './slot-pipeline.ts';
export { inOneWrite, sendFlatAll } from './flat-command.ts';
export { disconnectNow } from './disconnect-now.ts';
