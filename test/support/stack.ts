import { entryOf } from '@agent-reach/launcher';
import {
  onFreePort,
  randomPrefix,
  startNodeService,
  testServices,
  type ServiceProcess,
} from '@agent-reach/testkit';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { redisEnv } from './redis.ts';

/** Which InfluxDB write endpoint the services use. */
export type InfluxMode = 'v1' | 'v2';

/** registry-sync and a router running as real processes under one key prefix. */
export interface Stack {
  prefix: string;
  /** The keys of the stack's prefix, with the shard counts its services run with. */
  keys: ReachKeys;
  /** The environment the services were started with (to start more of them alike). */
  env: Record<string, string>;
  registryUrl: string;
  routerUrl: string;
  redisUrl: string;
  /** Seeds `host:port,…` of the cluster on the cluster leg (REDIS_CLUSTER_NODES); else empty. */
  redisClusterNodes: string;
  registry: ServiceProcess;
  router: ServiceProcess;
  /**
   * The error- and fatal-level log lines both services have written so far: what an operator
   * must look at. A client's mistake or a designed refusal never writes one.
   */
  errorLines(): string[];
  stop(): Promise<void>;
}

/** True for a pino JSON line at error level or above (50 error, 60 fatal). */
export function isErrorLine(line: string): boolean {
  const level = /"level":(\d+)/.exec(line)?.[1];
  return level !== undefined && Number(level) >= 50;
}

/** Fast lease settings so that tests about liveness finish in seconds. */
/** The last `count` lines of a service's output, for a failure message. */
export function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

export const FAST_LEASES = {
  REACH_HEARTBEAT_MS: '200',
  REACH_SUSPECT_MS: '1000',
  REACH_OFFLINE_MS: '2000',
  REACH_SWEEP_MS: '100',
  REACH_SNAPSHOT_MS: '500',
};

/**
 * How long a service may take to answer /healthz once spawned. A service starts through tsx in
 * about 2 s on an idle 2-core machine and in 20 s or more while `stress-ng --cpu 8` holds both
 * cores (docs/OPERATIONS.md, "Test loops"): a start-up deadline, not a figure any test checks.
 */
export const START_TIMEOUT_MS = 90_000;

/** Options of {@link startStack}. */
export interface StackOptions {
  influx?: InfluxMode;
  env?: Record<string, string>;
  /** A Redis of the test's own instead of the shared one. */
  redisUrl?: string;
  /** A Redis Cluster of the test's own (its seeds); `redisUrl` then names its first seed. */
  redisClusterNodes?: string;
}

/** Starts registry-sync and a router as processes, as `npm start` does, on free ports. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const shared = testServices();
  // A test's own Redis replaces the shared one whole: its URL, and its seeds or none.
  const services = opts.redisUrl
    ? { ...shared, redisUrl: opts.redisUrl, redisClusterNodes: opts.redisClusterNodes ?? '' }
    : shared;
  const redisClusterNodes = services.redisClusterNodes ?? '';
  const prefix = randomPrefix();
  const influx: Record<string, string> =
    opts.influx === 'v2'
      ? {
          INFLUX_URL: services.influxV2Url,
          INFLUX_API: 'v2',
          INFLUX_TOKEN: 'any',
          INFLUX_ORG: 'reach',
        }
      : { INFLUX_URL: services.influxUrl, INFLUX_API: 'v1' };
  const base: Record<string, string> = {
    ...redisEnv({ redisUrl: services.redisUrl, redisClusterNodes }),
    REACH_PREFIX: prefix,
    // On a Cluster the tasks spread over a shard per master, as a deployment there runs them.
    ...(redisClusterNodes ? { REACH_TASK_SHARDS: '3' } : {}),
    INFLUX_BUCKET: services.influxBucket,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...influx,
    ...(opts.env ?? {}),
  };
  const errorLines: string[] = [];
  const onLine = (line: string) => {
    if (isErrorLine(line)) errorLines.push(line);
  };
  // Each on a port of its own; started again on another if its port was taken before it listened.
  const { port: registryPort, started: registry } = await onFreePort('registry-sync', (port) =>
    startNodeService({
      name: 'registry-sync',
      entry: entryOf('registry-sync'),
      env: { ...base, REGISTRY_PORT: String(port) },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      timeoutMs: START_TIMEOUT_MS,
      onLine,
    }),
  );
  const registryUrl = `http://127.0.0.1:${registryPort}`;
  // Where routers send the console's drain and serve calls; a test may set it itself ('' unsets).
  if (opts.env?.['REACH_REGISTRY_URL'] === undefined) base['REACH_REGISTRY_URL'] = registryUrl;
  const { port: routerPort, started: router } = await onFreePort('router', (port) =>
    startRouter(base, port, onLine),
  );
  const routerUrl = `http://127.0.0.1:${routerPort}`;
  const counted = (name: string) => () => Number(base[name] ?? 1);
  return {
    prefix,
    keys: reachKeys(prefix, {
      shards: counted('REACH_SHARDS'),
      taskShards: counted('REACH_TASK_SHARDS'),
    }),
    env: base,
    registryUrl,
    routerUrl,
    redisUrl: services.redisUrl,
    redisClusterNodes,
    registry,
    router,
    errorLines: () => [...errorLines],
    async stop() {
      const codes = await Promise.all([router.stop(), registry.stop()]);
      if (codes.some((c) => c !== 0)) {
        throw new Error(
          `a service did not exit 0 on SIGTERM: ${codes.join(', ')}\n${router.output()}\n${registry.output()}`,
        );
      }
    },
  };
}

/** Starts one more router process with the stack's settings (several routers share Redis). */
export function startRouter(
  env: Record<string, string>,
  port: number,
  onLine?: (line: string) => void,
): Promise<ServiceProcess> {
  return startNodeService({
    name: `router-${port}`,
    entry: entryOf('router'),
    env: { ...env, ROUTER_PORT: String(port) },
    healthUrl: `http://127.0.0.1:${port}/healthz`,
    timeoutMs: START_TIMEOUT_MS,
    ...(onLine ? { onLine } : {}),
  });
}

/** JSON over HTTP with the status, for asserting on replies. */
export async function http<T = Record<string, unknown>>(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const hasBody = init.body !== undefined || init.raw !== undefined;
  const res = await fetch(url, {
    method: init.method ?? (hasBody ? 'POST' : 'GET'),
    headers: {
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      ...(init.headers ?? {}),
    },
    ...(hasBody ? { body: init.raw ?? JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T, headers: res.headers };
}
