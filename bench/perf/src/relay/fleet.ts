/**
 * `--modes relay-fleet`: one relay serving 1,000 HTTP endpoint agents (one demo server, a path
 * each). What it costs idle — Redis connections, resident memory, the relay's CPU for probes,
 * sweeps and heartbeats, registry-sync's for the batched heartbeats, Redis' — how long until every
 * agent is HEALTHY, the relay's CPU per task at that size, and how many relays 10,000 agents need.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { REGISTRY_SETTINGS } from '@agent-reach/protocol';
import { sleep } from '../clock.ts';
import { measureRun } from '../measure.ts';
import type { BenchOptions } from '../options.ts';
import { diffCalls, peakRssMiB, processCpuSeconds, processRssMiB } from '../proc/cpu.ts';
import type { Session } from '../session.ts';
import { round } from '../stats.ts';
import { fleetSizing, type FleetFigures } from './sizing.ts';

/** After the last agent is HEALTHY, past a heartbeat round and a full check of every agent. */
const SETTLE_MS = 6000;

/**
 * TCP connections process `pid` holds to `port` on this machine: its sockets' inodes
 * (`/proc/<pid>/fd`) found in `/proc/net/tcp` and `tcp6` with that remote port.
 */
export function tcpConnectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // rem_address is column 2, st column 3 (01 = ESTABLISHED), inode column 9.
      if (cols[2]?.endsWith(`:${hexPort}`) && cols[3] === '01' && inodes.has(cols[9] ?? '')) n++;
    }
  }
  return n;
}

/** Redis clients by name (`CLIENT LIST`) whose name starts with `prefix`. */
export function clientsNamed(clientList: string, prefix: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of clientList.split('\n')) {
    const name = /(?:^| )name=(\S*)/.exec(line)?.[1];
    if (name?.startsWith(prefix)) out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

/** Runs the fleet figures on a started session (one `relay-http` system) and prints them. */
export async function runRelayFleet(
  session: Session,
  opts: BenchOptions,
  out: (line: string) => void,
  log: (line: string) => void,
): Promise<number> {
  const system = session.systems[0];
  const facts = system?.endpointFacts;
  if (!system || !facts) throw new Error('relay-fleet: no relay system started');
  const redis = session.ownRedis();
  const byRole = (role: string) => system.processes.find((p) => p.role === role);
  const sync = byRole('sync');
  const router = byRole('front');
  if (!sync || !router) throw new Error('relay-fleet: registry-sync or the router is missing');
  const { relay, endpoint } = facts;
  const agents = opts.agents;
  log(
    `${agents} endpoint agents declared in ${(facts.declaredMs / 1000).toFixed(1)} s, all HEALTHY after ${(facts.healthyMs / 1000).toFixed(1)} s; settling ${SETTLE_MS / 1000} s`,
  );
  await sleep(SETTLE_MS);

  // Idle: no task, only probes, full checks, sweeps, heartbeats and registry-sync's probe tasks.
  type Watched = 'relay' | 'sync' | 'router' | 'endpoint' | 'redis';
  const cpuNow = (): Record<Watched, number> => ({
    relay: processCpuSeconds(relay.pid),
    sync: processCpuSeconds(sync.pid),
    router: processCpuSeconds(router.pid),
    endpoint: processCpuSeconds(endpoint.pid),
    redis: processCpuSeconds(redis.pid),
  });
  const commandsBefore = await redis.gauge.commandsProcessed();
  const callsBefore = await redis.gauge.commandCalls();
  const before = cpuNow();
  const t0 = performance.now();
  log(`measuring the idle fleet for ${opts.idleMs / 1000} s`);
  await sleep(opts.idleMs);
  const after = cpuNow();
  const idleS = (performance.now() - t0) / 1000;
  const commandsPerS = ((await redis.gauge.commandsProcessed()) - commandsBefore) / idleS;
  const idleCommands = [...diffCalls(callsBefore, await redis.gauge.commandCalls())]
    .sort((a, b) => b[1].calls - a[1].calls)
    .slice(0, 8)
    .map(([cmd, n]) => `${cmd} ${(n.calls / idleS).toFixed(0)}`)
    .join(', ');
  const pct = (k: Watched) => (100 * (after[k] - before[k])) / idleS;
  const idle = {
    relayPct: pct('relay'),
    syncPct: pct('sync'),
    routerPct: pct('router'),
    endpointPct: pct('endpoint'),
    redisPct: pct('redis'),
  };

  const clientList = String(await redis.admin.client('LIST'));
  const named = clientsNamed(clientList, 'reach-relay');
  const namedTotal = [...named.values()].reduce((a, b) => a + b, 0);
  const sockets = tcpConnectionsTo(relay.pid, redis.port);
  const rssMiB = processRssMiB(relay.pid);
  const peakMiB = peakRssMiB(relay.pid);

  // Under load: a paced run spread over every agent, for the relay's CPU per task at this size.
  const rate = opts.pacedRates[0] ?? 250;
  system.caller.send({ type: 'prepare', mode: 'paced' });
  await system.caller.next(
    (m) => m.type === 'prepared' && m['mode'] === 'paced',
    30_000,
    'the caller to prepare for paced',
  );
  log(`paced run: ${rate} tasks/s for ${opts.pacedMs / 1000} s over the ${agents} agents`);
  const rec = await measureRun(
    system,
    redis.gauge,
    {
      id: `relay-fleet-${process.pid}`,
      mode: 'paced',
      rate,
      durationMs: opts.pacedMs,
      drainTimeoutMs: opts.drainMs,
    },
    opts.pacedMs + opts.drainMs + 15_000,
  );
  const done = rec.result.completed;
  const runS = (rec.window.toMs - rec.window.fromMs) / 1000;
  const relayRunS = ((rec.procCpu[relay.name] ?? NaN) * done) / 1000;
  // The idle cost of the run's own seconds taken out: what the tasks added.
  const relayMsPerTask = ((relayRunS - (idle.relayPct / 100) * runS) * 1000) / done;

  const beatsPerS = agents / (REGISTRY_SETTINGS.heartbeatIntervalMs.default / 1000);
  const figures: FleetFigures = {
    agents,
    relayIdleCorePerAgent: idle.relayPct / 100 / agents,
    relayMsPerTask,
    rssAtZeroMiB: facts.rssAtZeroMiB,
    rssMiB,
  };
  const row = (k: string, v: string) => out(`  ${k.padEnd(52)} ${v}`);
  out(`relay fleet: one relay, ${agents} HTTP endpoint agents on one demo server (a path each)`);
  row('declared (PUT /v1/endpoints, 32 at once)', `${(facts.declaredMs / 1000).toFixed(2)} s`);
  row('first declaration → every agent HEALTHY', `${(facts.healthyMs / 1000).toFixed(2)} s`);
  row(
    "relay's Redis connections (CLIENT LIST name reach-relay*)",
    `${namedTotal} (${[...named].map(([n, c]) => `${n} ${c}`).join(', ')}); target ≤ 64: ${namedTotal <= 64 ? 'met' : 'MISSED'}`,
  );
  row("relay's TCP connections to Redis (/proc)", String(sockets));
  row(
    "relay's resident memory",
    `${rssMiB.toFixed(0)} MiB (peak ${peakMiB.toFixed(0)}, ${facts.rssAtZeroMiB.toFixed(0)} with no agent); target < 300: ${rssMiB < 300 ? 'met' : 'MISSED'}`,
  );
  row(
    `relay CPU idle (${idleS.toFixed(0)} s)`,
    `${idle.relayPct.toFixed(2)} % of a core = ${((idle.relayPct * 10) / agents).toFixed(3)} CPU-ms/s per agent`,
  );
  row(
    'registry-sync CPU idle (batched heartbeats, probe tasks)',
    `${idle.syncPct.toFixed(2)} % of a core (${beatsPerS.toFixed(0)} heartbeats/s: ${((idle.syncPct * 10 * 1000) / beatsPerS).toFixed(0)} µs each at most)`,
  );
  row('router CPU idle', `${idle.routerPct.toFixed(2)} % of a core`);
  row(
    'endpoint server CPU idle (TCP probes, checks)',
    `${idle.endpointPct.toFixed(2)} % of a core`,
  );
  row(
    'Redis CPU idle',
    `${idle.redisPct.toFixed(2)} % of a core, ${commandsPerS.toFixed(0)} commands/s`,
  );
  row("  by command, per second (scripts' commands included)", idleCommands);
  row(
    `paced ${rate} tasks/s × ${opts.pacedMs / 1000} s over ${agents} agents`,
    `${done}/${rec.result.submitted} completed, p50 ${rec.result.done.p50.toFixed(2)} ms, p99 ${rec.result.done.p99.toFixed(2)} ms`,
  );
  row('relay CPU per task at this size (idle taken out)', `${relayMsPerTask.toFixed(3)} ms`);
  out('');
  const sizing = fleetSizing(figures);
  for (const line of sizing.lines) out(line);
  out(
    JSON.stringify({
      relay_fleet_agents: agents,
      relay_fleet_healthy_s: round(facts.healthyMs / 1000),
      relay_redis_connections: namedTotal,
      relay_rss_mib: round(rssMiB),
      relay_idle_cpu_pct: round(idle.relayPct),
      relay_idle_cpu_ms_per_s_per_agent: round((idle.relayPct * 10) / agents),
      registry_idle_cpu_pct: round(idle.syncPct),
      redis_idle_cpu_pct: round(idle.redisPct),
      redis_idle_commands_per_s: round(commandsPerS),
      relay_fleet_cpu_ms_per_task: round(relayMsPerTask),
      relays_for_10000: sizing.relays,
    }),
  );
  return rec.result.failed > 0 ? 1 : 0;
}
