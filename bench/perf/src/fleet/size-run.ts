/**
 * One fleet size of `--modes fleet`: registry-sync and a router with keys required, simulated
 * agents in a few processes, then the measured phases in order — registration, idle with single
 * heartbeats, idle batched, a paced submit load, a new agent becoming routable, churn, and the
 * registration storm. The services are stopped at the end, so each size starts afresh.
 */
import { fileURLToPath } from 'node:url';
import { reachKeys } from '@agent-reach/protocol';
import { decodeSnapshot } from '@agent-reach/protocol';
import { sleep } from '../clock.ts';
import { startFairStack, type FairStack } from '../fairness/stack.ts';
import type { BenchOptions } from '../options.ts';
import type { Child, ChildMessage } from '../proc/children.ts';
import { peakRssMiB, processCpuSeconds, processRssMiB } from '../proc/cpu.ts';
import type { Session } from '../session.ts';
import type { FleetWindow, RegistrationRound } from './figures.ts';
import { pacedSubmits, timeRoutable, type PacedSubmits, type Routable } from './latency.ts';
import { FLEET_CAPABILITY, type BeatMode, type FleetCommand, type SimCounts } from './messages.ts';
import { redisNowMs, SnapshotWatch, statusChangesSince } from './snapshot-watch.ts';

/** Timing of one size's phases; {@link fleetTiming} fills it from the options. */
export interface FleetTiming {
  /** Each idle window and the churn window, ms. */
  idleMs: number;
  churnMs: number;
  /** After the fleet is HEALTHY, before the first window (probes start one interval in). */
  settleMs: number;
  /** After the storm, before counting the agents left HEALTHY. */
  stormSettleMs: number;
  pacedRate: number;
  pacedS: number;
  /** A registration round that takes longer stops the size: it cannot keep up. */
  registerTimeoutMs: number;
}

/** Everything measured at one size. */
export interface FleetSizeResult {
  agents: number;
  processes: number;
  registration: RegistrationRound;
  /** First registration call → every agent HEALTHY in the snapshot, s. */
  healthyS: number;
  single: FleetWindow;
  batch: FleetWindow;
  churn: FleetWindow;
  /** registry-sync's peak resident memory (VmHWM) after the churn, MiB. */
  syncPeakMiB: number;
  paced: PacedSubmits;
  routable: Routable | undefined;
  storm: RegistrationRound;
  /** Agents HEALTHY in the snapshot after the storm settled. */
  stormHealthy: number;
  /** Largest `gap_ms` of registry-sync's "housekeeping could not run" warnings, and how many. */
  housekeepingGapMs: number;
  housekeepingWarnings: number;
  /** registry-sync warnings "housekeeping pass failed". */
  passesFailed: number;
  /**
   * `reach_housekeeping_pass_max_seconds` of registry-sync's /metrics (its longest pass so far),
   * before and after the storm; undefined when registry-sync does not expose it.
   */
  worstPassS: { beforeStorm?: number; afterStorm?: number };
  /** Why a phase was cut short, if one was. */
  notes: string[];
  /** The services' pids, to name their CPU profiles (`--profile`). */
  pids: { sync: number; router: number };
}

/** A child process's messages of one type, once from each. */
async function fromEach(
  sims: readonly Child[],
  type: string,
  timeoutMs: number,
  what: string,
): Promise<ChildMessage[]> {
  return Promise.all(sims.map((c) => c.next((m) => m.type === type, timeoutMs, what)));
}

function sumCounts(replies: readonly ChildMessage[]): SimCounts {
  const sum: SimCounts = {
    beats: 0,
    beatsFailed: 0,
    beatRequests: 0,
    beatsLate: 0,
    probesAnswered: 0,
    tasksAnswered: 0,
    taskAgents: 0,
  };
  for (const r of replies)
    for (const k of Object.keys(sum) as (keyof SimCounts)[]) sum[k] += Number(r[k] ?? 0);
  return sum;
}

/** Stops a child this run started, by its pid: SIGTERM, then SIGKILL after 8 s. */
async function stopChild(child: Child): Promise<void> {
  if (child.hasExited()) return;
  try {
    process.kill(child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const gone = await Promise.race([child.exited.then(() => true), sleep(8000).then(() => false)]);
  if (!gone)
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
}

/** registry-sync's longest housekeeping pass so far, s, when its /metrics has the gauge. */
async function worstPassS(registryUrl: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${registryUrl}/metrics`)).text();
    const m = /^reach_housekeeping_pass_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs one size; the caller prints the results. */
export async function runFleetSize(
  session: Session,
  opts: BenchOptions,
  agents: number,
  timing: FleetTiming,
  log: (line: string) => void,
): Promise<FleetSizeResult> {
  const { admin, port, pid: redisPid } = session.ownRedis();
  const redisUrl = `redis://127.0.0.1:${port}`;
  const prefix = `bench-fleet-${agents}`;
  const keys = reachKeys(prefix);
  const notes: string[] = [];
  const warn = { gapMs: 0, gaps: 0, failed: 0 };
  const stack: FairStack = await startFairStack(session.children, redisUrl, opts, {
    prefix,
    procPrefix: `fleet${agents}`,
    ...(session.profileDir
      ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${session.profileDir}`] }
      : {}),
    onRegistryLine: (line) => {
      if (line.includes('housekeeping could not run')) {
        warn.gaps++;
        warn.gapMs = Math.max(warn.gapMs, Number(/"gap_ms":(\d+)/.exec(line)?.[1] ?? 0));
      } else if (line.includes('housekeeping pass failed')) warn.failed++;
    },
  });
  const sims: Child[] = [];
  const watch = new SnapshotWatch(redisUrl, admin, keys);
  try {
    const agentKey = await stack.key('default', 'agent');
    const callerKey = await stack.key('default', 'caller');
    await watch.start();
    const processes = Math.min(4, Math.max(1, Math.ceil(agents / 2500)));
    const per = Math.ceil(agents / processes);
    const entry = fileURLToPath(new URL('./sim-agents.ts', import.meta.url));
    for (let p = 0; p < processes; p++) {
      const from = p * per;
      const count = Math.min(per, agents - from);
      sims.push(
        await session.children.spawnNode({
          name: `fleet${agents}-sim-${p}`,
          role: 'workers',
          entry,
          ipc: true,
          echo: opts.verbose,
          env: {
            REGISTRY_URL: stack.registryUrl,
            REDIS_URL: redisUrl,
            AGENT_KEY: agentKey,
            AGENT_FROM: String(from),
            AGENT_COUNT: String(count),
            SIM_NAME: `sim${p}`,
          },
        }),
      );
    }
    await fromEach(sims, 'ready', 60_000, 'the simulated agents to start');
    const sync = stack.registry.pid;
    const router = stack.router.pid;
    const send = (cmd: FleetCommand) => {
      for (const s of sims) s.send(cmd);
    };
    const counts = async () =>
      sumCounts(
        await Promise.all(
          sims.map(async (s) => {
            const reply = s.next((m) => m.type === 'counts', 10_000, 'counts');
            s.send({ type: 'counts' });
            return reply;
          }),
        ),
      );

    const register = async (generation: number, concurrency: number) => {
      const cpu0 = processCpuSeconds(sync);
      const t0 = performance.now();
      const wait = fromEach(
        sims,
        'registered',
        timing.registerTimeoutMs,
        `registration round ${generation} to finish (bound ${timing.registerTimeoutMs / 1000} s: registry-sync cannot keep up)`,
      );
      send({ type: 'register', generation, concurrency });
      const replies = await wait;
      const errors: Record<string, number> = {};
      for (const r of replies)
        for (const [k, v] of Object.entries(r['errors'] as Record<string, number>))
          errors[k] = (errors[k] ?? 0) + v;
      const ok = replies.reduce((a, r) => a + Number(r['ok']), 0);
      const lat = replies.map((r) => r['latencyMs'] as RegistrationRound['latencyMs']);
      const worst = (k: 'p50' | 'p99' | 'max') => Math.max(...lat.map((l) => l[k]));
      return {
        agents,
        ok,
        failed: agents - ok,
        seconds: (performance.now() - t0) / 1000,
        syncCpuS: processCpuSeconds(sync) - cpu0,
        errors,
        latencyMs: { p50: worst('p50'), p99: worst('p99'), max: worst('max') },
      } satisfies RegistrationRound;
    };
    const healthyCount = async () => {
      const snap = decodeSnapshot(await admin.get(keys.snapshot()));
      return (snap?.agents ?? []).filter(
        (a) => a.agent_id.startsWith('fleet-') && a.status === 'HEALTHY',
      ).length;
    };
    const untilHealthy = async (want: number, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      let n = 0;
      while (performance.now() < deadline) {
        n = await healthyCount();
        if (n >= want) return n;
        await sleep(1000);
      }
      return n;
    };
    const measure = async (seconds: number): Promise<FleetWindow> => {
      const c0 = await counts();
      const since = await redisNowMs(admin);
      watch.take();
      const cpu = () => [sync, router, redisPid].map(processCpuSeconds);
      const [s0 = NaN, r0 = NaN, d0 = NaN] = cpu();
      const t0 = performance.now();
      await sleep(seconds * 1000);
      const [s1 = NaN, r1 = NaN, d1 = NaN] = cpu();
      const wall = (performance.now() - t0) / 1000;
      const snapshot = watch.take();
      const c1 = await counts();
      return {
        seconds: wall,
        sync: { cpuS: s1 - s0, rssMiB: processRssMiB(sync) },
        router: { cpuS: r1 - r0, rssMiB: processRssMiB(router) },
        redisCpuS: d1 - d0,
        beats: c1.beats - c0.beats,
        beatRequests: c1.beatRequests - c0.beatRequests,
        beatsFailed: c1.beatsFailed - c0.beatsFailed,
        beatsLate: c1.beatsLate - c0.beatsLate,
        statusChanges: await statusChangesSince(admin, keys, since),
        snapshot,
      };
    };
    const beats = (mode: BeatMode, flapShare = 0) =>
      send({ type: 'beats', mode, flapShare, flapIntervalMs: 20_000 });

    log(`${agents} agents in ${processes} process(es): registering, 64 at once`);
    const t0 = performance.now();
    const registration = await register(1, Math.ceil(64 / processes));
    log(
      `registered ${registration.ok}/${agents} in ${registration.seconds.toFixed(1)} s; waiting for HEALTHY`,
    );
    const healthy = await untilHealthy(registration.ok, 120_000);
    const healthyS = (performance.now() - t0) / 1000;
    if (healthy < registration.ok)
      notes.push(`only ${healthy}/${registration.ok} agents HEALTHY within 120 s of registering`);
    await sleep(timing.settleMs);

    log(`idle, single heartbeats, ${timing.idleMs / 1000} s`);
    const single = await measure(timing.idleMs / 1000);
    beats('batch');
    await sleep(6000);
    // Single heartbeats that fell behind left agents SUSPECT: the batched window starts healthy.
    const recovered = await untilHealthy(registration.ok, 40_000);
    if (recovered < registration.ok)
      notes.push(`batched window began with ${recovered}/${registration.ok} HEALTHY`);
    log(`idle, batched heartbeats, ${timing.idleMs / 1000} s`);
    const batch = await measure(timing.idleMs / 1000);

    log(`paced submits, ${timing.pacedRate}/s for ${timing.pacedS} s`);
    const tasks0 = await counts();
    const paced = await pacedSubmits(
      stack.routerUrl,
      callerKey,
      FLEET_CAPABILITY,
      timing.pacedRate,
      timing.pacedS,
    );
    await sleep(1000);
    const tasks1 = await counts();
    paced.answered = tasks1.tasksAnswered - tasks0.tasksAnswered;
    paced.agents = tasks1.taskAgents - tasks0.taskAgents;
    // Where the slowest submits spent their time, as the router recorded it (stderr only).
    for (const { ms, taskId } of paced.slowest) {
      const res = await fetch(`${stack.routerUrl}/v1/tasks/${encodeURIComponent(taskId)}`, {
        headers: { authorization: `Bearer ${callerKey}` },
      });
      log(`slow submit ${ms.toFixed(0)} ms: ${(await res.text()).slice(0, 600)}`);
    }
    let routable: Routable | undefined;
    try {
      routable = await timeRoutable({
        registryUrl: stack.registryUrl,
        routerUrl: stack.routerUrl,
        redisUrl,
        agentKey,
        callerKey,
        agentId: `fleet-new-${agents}`,
        capability: `fleet-new-${agents}`,
        timeoutMs: 30_000,
      });
    } catch (err: unknown) {
      notes.push(`new agent not routable: ${err instanceof Error ? err.message : String(err)}`);
    }

    log(`churn: 10 % of the agents heartbeat every 20 s, ${timing.churnMs / 1000} s`);
    beats('batch', 0.1);
    const churn = await measure(timing.churnMs / 1000);
    const syncPeakMiB = peakRssMiB(sync);
    beats('batch');
    const back = await untilHealthy(registration.ok, 40_000);
    if (back < registration.ok) notes.push(`after churn only ${back}/${registration.ok} HEALTHY`);

    log('registration storm: every agent registers again at once (new instances)');
    const beforeStorm = await worstPassS(stack.registryUrl);
    const storm = await register(2, 0);
    await sleep(timing.stormSettleMs);
    const stormHealthy = await healthyCount();
    const afterStorm = await worstPassS(stack.registryUrl);
    return {
      agents,
      processes,
      registration,
      healthyS,
      single,
      batch,
      churn,
      syncPeakMiB,
      paced,
      routable,
      storm,
      stormHealthy,
      housekeepingGapMs: warn.gapMs,
      housekeepingWarnings: warn.gaps,
      passesFailed: warn.failed,
      worstPassS: { beforeStorm, afterStorm },
      notes,
      pids: { sync, router },
    };
  } finally {
    await watch.close();
    await Promise.all(sims.map(stopChild));
    await stopChild(stack.router);
    await stopChild(stack.registry);
    await admin.flushall();
  }
}
