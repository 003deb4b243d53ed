import { randomBytes } from 'node:crypto';
import type { BenchOptions } from '../options.ts';
import type { Child, ChildSet } from '../proc/children.ts';
import { getJson, until } from '../stack/health.ts';
import { spawnListening } from '../stack/ports.ts';
import { serverEntry } from '../stack/service-build.ts';

/** Key prefix of the fairness runs in the session's Redis. */
const PREFIX = 'bench-fair';

/** A router and registry-sync with API keys required, and what talking to them takes. */
export interface FairStack {
  routerUrl: string;
  registryUrl: string;
  redisUrl: string;
  /** REACH_ADMIN_KEY: operator calls, and the shared agents' key. */
  adminKey: string;
  router: Child;
  registry: Child;
  /** `POST /v1/keys` with the admin key: a caller key of `tenant`. */
  callerKey(tenant: string): Promise<string>;
  /** `POST /v1/keys` with the admin key: a key of `role` (`caller`, `agent`) of `tenant`. */
  key(tenant: string, role: 'caller' | 'agent'): Promise<string>;
  /** `GET` a path of the router with the admin key; undefined when it fails. */
  adminGet(path: string): Promise<unknown>;
  /** Resolves once the router routes by a snapshot of exactly `agents` agents (a closed fleet gone). */
  holdsAgents(agents: number): Promise<void>;
}

/** Where and how {@link startFairStack} starts the services (`--modes fleet` uses its own). */
export interface FairStackNaming {
  /** Key prefix. @default 'bench-fair' */
  prefix?: string;
  /** What the processes' names start with. @default 'fair' */
  procPrefix?: string;
  /** Called with every line registry-sync prints (its warnings). */
  onRegistryLine?: (line: string) => void;
  /** Flags for node running both services (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
}

/**
 * Starts registry-sync and one router on the session's Redis, REACH_AUTH=required with a random
 * admin key, and waits for both `/healthz`. The session stops them with everything else.
 */
export async function startFairStack(
  children: ChildSet,
  redisUrl: string,
  opts: BenchOptions,
  naming: FairStackNaming = {},
): Promise<FairStack> {
  const adminKey = randomBytes(32).toString('hex');
  const procPrefix = naming.procPrefix ?? 'fair';
  const env = {
    REDIS_URL: redisUrl,
    REACH_PREFIX: naming.prefix ?? PREFIX,
    REACH_AUTH: 'required',
    REACH_ADMIN_KEY: adminKey,
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.serviceLogLevel,
    INFLUX_URL: '',
  };
  const healthy = (child: Child, port: number) =>
    until(
      `${child.name} /healthz`,
      async () => (await getJson(`http://127.0.0.1:${port}/healthz`)) !== undefined,
      30_000,
      child,
    );
  const common = {
    env,
    echo: opts.verbose,
    ...(naming.nodeArgs ? { nodeArgs: naming.nodeArgs } : {}),
  };
  // Side by side: the router's /healthz answers 200 only once it holds registry-sync's snapshot.
  const registrySpec = {
    ...common,
    name: `${procPrefix}-registry-sync`,
    role: 'sync' as const,
    entry: serverEntry('@agent-reach/registry-sync', opts.build),
    ...(naming.onRegistryLine ? { onLine: naming.onRegistryLine } : {}),
  };
  const routerSpec = {
    ...common,
    name: `${procPrefix}-router`,
    role: 'front' as const,
    entry: serverEntry('@agent-reach/router', opts.build),
  };
  const [registry, router] = await Promise.all([
    spawnListening(children, registrySpec, 'REGISTRY_PORT', healthy),
    spawnListening(children, routerSpec, 'ROUTER_PORT', healthy),
  ]);
  const routerUrl = `http://127.0.0.1:${router.port}`;
  const admin = { authorization: `Bearer ${adminKey}` };
  const key = async (tenant: string, role: 'caller' | 'agent') => {
    const res = await fetch(`${routerUrl}/v1/keys`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant, role, label: `bench ${procPrefix} ${tenant}` }),
    });
    const body = (await res.json()) as { key?: string };
    if (res.status !== 201 || !body.key) throw new Error(`POST /v1/keys answered ${res.status}`);
    return body.key;
  };
  return {
    routerUrl,
    registryUrl: `http://127.0.0.1:${registry.port}`,
    redisUrl,
    adminKey,
    router: router.child,
    registry: registry.child,
    callerKey: (tenant) => key(tenant, 'caller'),
    key,
    adminGet: (path) => getJson(`${routerUrl}${path}`, admin),
    holdsAgents: (agents) =>
      until(
        `the router's snapshot to hold ${agents} agents`,
        async () => {
          const health = (await getJson(`${routerUrl}/healthz`)) as
            { snapshot?: { agents?: number } } | undefined;
          return health?.snapshot?.agents === agents;
        },
        20_000,
        router.child,
      ),
  };
}
