import { randomBytes } from 'node:crypto';
import type { BenchOptions, SystemName } from '../options.ts';
import type { Child, ChildSet } from '../proc/children.ts';
import { GcTrace } from '../proc/gc-trace.ts';
import type { Pinning } from '../proc/pin.ts';
import type { RedisGauge } from '../proc/redis-nodes.ts';
import { getJson, until } from './health.ts';
import { roomEntries } from './room-entries.ts';
import { startRouterBalancer } from './nginx.ts';
import { spawnListening } from './ports.ts';
import { startEndpointAgents, type EndpointSpec } from './relay.ts';
import { entry, type RunningSystem } from './running.ts';
import { serverEntry } from './service-build.ts';

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

/**
 * A fleet of agents several to a process (`--topology`): agent i (`bench-agent-<i>`) serves
 * capability `bench-noop-<i mod capabilities>`, and the agents are dealt to `opts.workers`
 * processes in turn.
 */
export interface FleetSpec {
  agents: number;
  capabilities: number;
}

/** The callback topic of a system's caller. */
export const callbackTopic = (system: SystemName): string => `bench-caller-${system}`;

/** The capabilities of a {@link FleetSpec}, in order. */
export const fleetCapabilities = (fleet: FleetSpec): string[] =>
  Array.from({ length: fleet.capabilities }, (_, c) => `${REACH_CAPABILITY}-${c}`);

/** What starting Agent-Reach needs. */
export interface ReachStackOptions {
  children: ChildSet;
  redisUrl: string;
  opts: BenchOptions;
  /** The system's name. @default 'reach' ('reach-auth' with `auth`) */
  name?: SystemName;
  /** What its processes' names start with. @default the system's name */
  procPrefix?: string;
  /** Key prefix. @default 'bench' ('bench-auth' with `auth`) */
  prefix?: string;
  /** Environment of every service and agent for Redis; replaces `REDIS_URL` (a cluster's seeds). */
  redisEnv?: Record<string, string>;
  /** More environment of the router(s) and registry-sync (e.g. REACH_SHARDS). */
  serviceEnv?: Record<string, string>;
  /** Routers; more than one are put behind nginx, which callers and agents then use. @default 1 */
  routers?: number;
  /** Where nginx keeps its files, when `routers` > 1. */
  workDir?: string;
  /** Agents several to a process instead of one per process (`opts.workers` processes either way). */
  fleet?: FleetSpec;
  /** The Redis the system runs on, when not the session's one Redis. */
  redis?: RedisGauge;
  /** Write CPU profiles of the router and registry-sync here (at their exit). */
  profileDir?: string;
  /** Start the (first) router with `--trace-gc` and keep its collections (`RunningSystem.gc`). */
  traceGc?: boolean;
  /** The router on `pin.measured`, every other process on `pin.rest` (`--modes router-only`). */
  pin?: Pinning;
  /**
   * Agents played by one stub process (`systems/router-only/stub-agent.ts`: plain Redis commands,
   * no SDK) instead of worker-sdk agents, `opts.workers` of them of `opts.concurrency` slots each.
   */
  stubAgents?: boolean;
  /**
   * Endpoint agents served by a relay instead of worker-sdk agents (`--modes relay`,
   * `relay-fleet`): a demo endpoint server and a relay, each a process of its own.
   */
  endpoints?: EndpointSpec;
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
 * Starts registry-sync, one router (or `routers` behind nginx), the agents (one to a process, or a
 * `fleet` several to a process) and a caller process, and waits until every router's snapshot
 * holds every agent. InfluxDB is left unset: the event sink is a no-op.
 */
export async function startReach({
  children,
  redisUrl,
  opts,
  profileDir,
  auth = false,
  ...more
}: ReachStackOptions): Promise<RunningSystem> {
  const adminKey = randomBytes(32).toString('hex');
  const name = more.name ?? (auth ? 'reach-auth' : 'reach');
  const procPrefix = more.procPrefix ?? name;
  const rest = more.pin ? { cpus: more.pin.rest } : {};
  const gc = more.traceGc ? new GcTrace() : undefined;
  const redisEnv = more.redisEnv ?? { REDIS_URL: redisUrl };
  const routerCount = more.routers ?? 1;
  const fleet = more.fleet;
  const endpoints = more.endpoints;
  const agentCount = endpoints?.agents ?? fleet?.agents ?? opts.workers;
  const agentProcesses = more.stubAgents ? 1 : Math.min(opts.workers, agentCount);
  const common = {
    ...redisEnv,
    ...more.serviceEnv,
    REACH_PREFIX: more.prefix ?? (auth ? `${REACH_PREFIX}-auth` : REACH_PREFIX),
    // With keys required, loopback endpoint URLs must be allowed by name (REACH_OUTBOUND_LOOPBACK).
    ...(auth
      ? { REACH_AUTH: 'required', REACH_ADMIN_KEY: adminKey, REACH_ENDPOINT_HOSTS: '127.0.0.1' }
      : {}),
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.serviceLogLevel,
    // No InfluxDB unless BENCH_INFLUX_URL names one (to weigh the events and the task archive).
    INFLUX_URL: process.env.BENCH_INFLUX_URL ?? '',
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
  const registrySpec = {
    name: `${procPrefix}-registry-sync`,
    role: 'sync' as const,
    entry: serverEntry('@agent-reach/registry-sync', opts.build),
    env: common,
    nodeArgs,
    echo,
    ...rest,
  };
  const routerEntry = serverEntry('@agent-reach/router', opts.build);
  const routerSpecs = Array.from({ length: routerCount }, (_, i) => ({
    name: routerCount > 1 ? `${procPrefix}-router-${i}` : `${procPrefix}-router`,
    role: 'front' as const,
    entry: routerEntry,
    env: common,
    ...(i === 0 && gc
      ? { nodeArgs: [...nodeArgs, '--trace-gc'], onLine: gc.onLine }
      : { nodeArgs }),
    echo,
    ...(more.pin ? { cpus: more.pin.measured } : {}),
  }));
  const registryHealthy = healthy('registry-sync');
  const routerHealthy = healthy('router');
  const [registry, ...routing] = await Promise.all([
    spawnListening(children, registrySpec, 'REGISTRY_PORT', registryHealthy),
    ...routerSpecs.map((spec) => spawnListening(children, spec, 'ROUTER_PORT', routerHealthy)),
  ]);
  const sync = registry.child;
  const routers = routing.map((r) => r.child);
  const router = routers[0] as Child;
  const routerUrls = routing.map((r) => `http://127.0.0.1:${r.port}`);
  const registryUrl = `http://127.0.0.1:${registry.port}`;
  const balancer =
    routerCount > 1
      ? await startRouterBalancer({
          name: `${name}-nginx`,
          sessionDir: more.workDir ?? '.',
          ports: routing.map((r) => r.port),
        })
      : undefined;
  const routerUrl = balancer ? balancer.url : String(routerUrls[0]);
  const adminAuth: Record<string, string> = auth ? { authorization: `Bearer ${adminKey}` } : {};
  const [agentKey, callerKey] = auth
    ? await Promise.all([
        makeKey(routerUrl, adminKey, 'agent'),
        makeKey(routerUrl, adminKey, 'caller'),
      ])
    : [undefined, undefined];
  const agentEnv = {
    REACH_REGISTRY_URL: registryUrl,
    REACH_ROUTER_URL: routerUrl,
    ...redisEnv,
    BENCH_CAPABILITY: REACH_CAPABILITY,
    MAX_CONCURRENCY: String(opts.concurrency),
    LOG_LEVEL: opts.serviceLogLevel,
    ...(agentKey ? { REACH_KEY: agentKey } : {}),
  };
  const served = endpoints
    ? await startEndpointAgents({
        children,
        name,
        registryUrl,
        // The relay's membership lease past any pause too (`--modes relay` freezes it during the
        // other systems' runs); the fleet is never frozen and keeps the default lease.
        env: opts.relay === 'fleet' ? common : { ...common, REACH_RELAY_LEASE_MS: '600000' },
        spec: endpoints,
        opts,
        auth: adminAuth,
        httpCapability: REACH_CAPABILITY,
      })
    : undefined;
  const capabilities = served
    ? [served.capability]
    : fleet
      ? fleetCapabilities(fleet)
      : [REACH_CAPABILITY];
  const stubAgents = more.stubAgents
    ? Array.from({ length: agentCount }, (_, j) => `bench-agent-${j}=${REACH_CAPABILITY}`)
    : undefined;
  const agents = await Promise.all(
    Array.from({ length: served ? 0 : agentProcesses }, (_, i) =>
      children.spawnNode({
        name: stubAgents ? `${procPrefix}-stub-agent` : `${procPrefix}-agent-${i}`,
        role: 'workers',
        entry: entry(
          stubAgents ? 'router-only/stub-agent.ts' : fleet ? 'reach/fleet.ts' : 'reach/agent.ts',
        ),
        env: stubAgents
          ? { ...agentEnv, AGENTS: stubAgents.join(',') }
          : fleet
            ? {
                ...agentEnv,
                // Agent j runs in process j mod workers and serves capability j mod capabilities.
                AGENTS: Array.from({ length: fleet.agents }, (_, j) => j)
                  .filter((j) => j % agentProcesses === i)
                  .map((j) => `bench-agent-${j}=${capabilities[j % capabilities.length] ?? ''}`)
                  .join(','),
              }
            : { ...agentEnv, REACH_AGENT_ID: `bench-agent-${i}` },
        nodeArgs,
        ipc: true,
        echo,
        ...rest,
      }),
    ),
  );
  const caller = await children.spawnNode({
    name: `${procPrefix}-caller`,
    role: 'caller',
    entry: entry('reach/caller.ts'),
    env: {
      REACH_ROUTER_URL: routerUrl,
      BENCH_CAPABILITY: capabilities.join(','),
      CALLBACK_TOPIC: callbackTopic(name),
      HTTP_CONNECTIONS: String(opts.httpConnections),
      ...(callerKey ? { REACH_KEY: callerKey } : {}),
    },
    ipc: true,
    echo,
    ...rest,
  });
  await Promise.all(
    [...agents, caller].map((c) => c.next((m) => m.type === 'ready', 30_000, 'ready')),
  );
  // Registrations trigger a snapshot and a notification; wait until every router routes by it.
  const snapshotsHold = async () => {
    for (const url of routerUrls) {
      const health = (await getJson(`${url}/healthz`)) as
        { snapshot?: { agents?: number } } | undefined;
      if ((health?.snapshot?.agents ?? 0) < agentCount) return false;
    }
    return true;
  };
  await until(`the routers' snapshots to hold ${agentCount} agents`, snapshotsHold, 20_000, router);
  return {
    name,
    caller,
    processes: [
      caller,
      ...routers,
      sync,
      ...agents,
      ...(served ? [served.relay, served.endpoint] : []),
    ],
    ...(served ? { endpointFacts: served } : {}),
    httpOnly: [],
    ...(balancer
      ? {
          cpuOnly: [{ name: `${name}-nginx`, role: 'front' as const, pid: balancer.pid }],
          stop: () => balancer.stop(),
          killNow: () => balancer.killNow(),
        }
      : {}),
    ...(more.redis ? { redis: more.redis } : {}),
    ...(gc ? { gc } : {}),
    roomEntries: () => roomEntries(routerUrls, adminAuth),
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
          return healthy >= agentCount && (await snapshotsHold());
        },
        20_000,
        router,
      ),
  };
}
