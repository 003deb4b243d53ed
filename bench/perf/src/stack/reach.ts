import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from '../options.ts';
import type { Child, ChildSet } from '../proc/children.ts';
import { getJson, until } from './health.ts';
import { spawnListening } from './ports.ts';
import { entry, type RunningSystem } from './running.ts';

/** Key prefix of Agent-Reach in the shared Redis (`bench-auth` for the reach-auth system). */
export const REACH_PREFIX = 'bench';
/** The capability every bench agent serves. */
export const REACH_CAPABILITY = 'bench-noop';

/**
 * Agent-Reach is frozen (SIGSTOP) while the other systems run, for up to tens of seconds, its
 * agents with it: lease and unread-inbox thresholds past any pause, so that registry-sync does not
 * take the silence for dead agents when it wakes before their next heartbeat. Thresholds only —
 * heartbeats, sweeps, snapshots and probes keep their default cadence, so what Agent-Reach does
 * in the background during its own runs is what it does in production.
 */
const PAUSE_PROOF = {
  REACH_SUSPECT_MS: '600000',
  REACH_OFFLINE_MS: '1200000',
  REACH_CONSUME_BOUND_MS: '600000',
};

/** Where the router's and registry-sync's `server.ts` are, found through their package names. */
function serverEntry(pkg: string): string {
  return join(dirname(fileURLToPath(import.meta.resolve(pkg))), 'server.ts');
}

/** What starting Agent-Reach needs. */
export interface ReachStackOptions {
  children: ChildSet;
  redisUrl: string;
  opts: BenchOptions;
  /** Write CPU profiles of the router and registry-sync here (at their exit). */
  profileDir?: string;
  /**
   * The reach-auth system: REACH_AUTH=required with an admin key, the agents on an agent key
   * and the caller on a caller key (docs/SECURITY.md), under a prefix of its own.
   */
  auth?: boolean;
}

/** `POST /v1/keys` with the admin key: a new key of `role`. */
async function makeKey(routerUrl: string, adminKey: string, role: string): Promise<string> {
  const res = await fetch(`${routerUrl}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'default', role, label: `bench ${role}` }),
  });
  const body = (await res.json()) as { key?: string };
  if (res.status !== 201 || !body.key) throw new Error(`POST /v1/keys answered ${res.status}`);
  return body.key;
}

/**
 * Starts registry-sync, one router, the agents and a caller process, and waits until the router's
 * snapshot holds every agent. InfluxDB is left unset: the event sink is a no-op.
 */
export async function startReach({
  children,
  redisUrl,
  opts,
  profileDir,
  auth = false,
}: ReachStackOptions): Promise<RunningSystem> {
  const adminKey = randomBytes(32).toString('hex');
  const name = auth ? 'reach-auth' : 'reach';
  const common = {
    REDIS_URL: redisUrl,
    REACH_PREFIX: auth ? `${REACH_PREFIX}-auth` : REACH_PREFIX,
    ...(auth ? { REACH_AUTH: 'required', REACH_ADMIN_KEY: adminKey } : {}),
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.serviceLogLevel,
    INFLUX_URL: '',
    ...PAUSE_PROOF,
  };
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const echo = opts.verbose;
  const healthy = (what: string) => (child: Child, port: number) =>
    until(
      `${what} /healthz`,
      async () => (await getJson(`http://127.0.0.1:${port}/healthz`)) !== undefined,
      30_000,
      child,
    );
  // Started side by side: the router's /healthz answers 200 only once it holds registry-sync's
  // first snapshot (503 NO_SNAPSHOT before), so its wait covers registry-sync starting too.
  const [registry, routing] = await Promise.all([
    spawnListening(
      children,
      {
        name: `${name}-registry-sync`,
        role: 'sync',
        entry: serverEntry('@agent-reach/registry-sync'),
        env: common,
        nodeArgs,
        echo,
      },
      'REGISTRY_PORT',
      healthy('registry-sync'),
    ),
    spawnListening(
      children,
      {
        name: `${name}-router`,
        role: 'front',
        entry: serverEntry('@agent-reach/router'),
        env: common,
        nodeArgs,
        echo,
      },
      'ROUTER_PORT',
      healthy('router'),
    ),
  ]);
  const [sync, router] = [registry.child, routing.child];
  const registryUrl = `http://127.0.0.1:${registry.port}`;
  const routerUrl = `http://127.0.0.1:${routing.port}`;
  const [agentKey, callerKey] = auth
    ? await Promise.all([
        makeKey(routerUrl, adminKey, 'agent'),
        makeKey(routerUrl, adminKey, 'caller'),
      ])
    : [undefined, undefined];
  const adminAuth: Record<string, string> = auth ? { authorization: `Bearer ${adminKey}` } : {};
  const agentEnv = {
    REGISTRY_URL: registryUrl,
    ROUTER_URL: routerUrl,
    REDIS_URL: redisUrl,
    BENCH_CAPABILITY: REACH_CAPABILITY,
    MAX_CONCURRENCY: String(opts.concurrency),
    LOG_LEVEL: opts.serviceLogLevel,
    ...(agentKey ? { REACH_KEY: agentKey } : {}),
  };
  const agents = await Promise.all(
    Array.from({ length: opts.workers }, (_, i) =>
      children.spawnNode({
        name: `${name}-agent-${i}`,
        role: 'workers',
        entry: entry('reach/agent.ts'),
        env: { ...agentEnv, AGENT_ID: `bench-agent-${i}` },
        nodeArgs,
        ipc: true,
        echo,
      }),
    ),
  );
  const caller = await children.spawnNode({
    name: `${name}-caller`,
    role: 'caller',
    entry: entry('reach/caller.ts'),
    env: {
      ROUTER_URL: routerUrl,
      BENCH_CAPABILITY: REACH_CAPABILITY,
      HTTP_CONNECTIONS: String(opts.httpConnections),
      ...(callerKey ? { REACH_KEY: callerKey } : {}),
    },
    ipc: true,
    echo,
  });
  await Promise.all(
    [...agents, caller].map((c) => c.next((m) => m.type === 'ready', 30_000, 'ready')),
  );
  // Registrations trigger a snapshot and a notification; wait until the router routes by it.
  await until(
    `the router's snapshot to hold ${opts.workers} agents`,
    async () => {
      const health = (await getJson(`${routerUrl}/healthz`)) as
        { snapshot?: { agents?: number } } | undefined;
      return (health?.snapshot?.agents ?? 0) >= opts.workers;
    },
    20_000,
    router,
  );
  return {
    name,
    caller,
    processes: [caller, router, sync, ...agents],
    httpOnly: [],
    betweenRuns: () => Promise.resolve(),
    // Woken together, registry-sync and the agents catch up on their overdue timers at once; go
    // on once every agent is HEALTHY and the router holds a snapshot of them all.
    awake: () =>
      until(
        'every agent HEALTHY after a pause',
        async () => {
          const list = (await getJson(`${registryUrl}/v1/agents`, adminAuth)) as
            { agents?: { status?: string }[] } | undefined;
          const healthy = (list?.agents ?? []).filter((a) => a.status === 'HEALTHY').length;
          const health = (await getJson(`${routerUrl}/healthz`)) as
            { snapshot?: { agents?: number } } | undefined;
          return healthy >= opts.workers && (health?.snapshot?.agents ?? 0) >= opts.workers;
        },
        20_000,
        router,
      ),
  };
}
