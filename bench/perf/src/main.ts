/**
 * `npm run bench`: Agent-Reach end to end against BullMQ and the raw Redis Streams floor, on one
 * private Redis, interleaved; a table, then one JSON line (the last line of stdout).
 * `--quick` for the CI smoke run, `--routing` for the routing microbenchmark, `--profile` for CPU
 * profiles of the router and registry-sync during a flood, `--topology cluster` for the flood on
 * one Redis against a 3-master Redis Cluster and one router against three, `--modes fairness` for
 * issue 30's noisy neighbour on the waiting room against BullMQ, `--modes fleet` for the control
 * plane at 1,000 to 10,000 simulated agents. See docs/PERFORMANCE.md.
 */
import { cpus, loadavg } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  parseArgs,
  UsageError,
  type BenchOptions,
  type RelaySystemName,
  type SystemName,
} from './options.ts';
import { runPlan } from './plan.ts';
import type { Role } from './proc/children.ts';
import { processRssMiB } from './proc/cpu.ts';
import {
  commandLines,
  commandTimeLines,
  gcLines,
  hopLines,
  headline,
  headlineJson,
  table,
  targetLines,
} from './report.ts';
import { runFairness } from './fairness/run.ts';
import { runFleet } from './fleet/run.ts';
import { readProfiles, renderSummary, summarizeProfile } from './profile/summary.ts';
import { relayTable, relayTargets } from './relay/compare.ts';
import { runRelayFleet } from './relay/fleet.ts';
import { printRouterOnlyReport } from './router-only/print.ts';
import { runRoutingBench } from './routing/bench.ts';
import { Session, WORK_DIR, type Records } from './session.ts';
import { chooseServiceBuild } from './stack/service-build.ts';
import { printTopologyReport } from './topology/print.ts';

/** How long the services sit idle before their memory is read again. */
const RSS_SETTLE_MS = 10_000;
const out = (line: string) => process.stdout.write(`${line}\n`);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function settingsLine(o: BenchOptions): string {
  const modes = [
    o.modes.includes('flood') ? `flood ${o.floodTasks} tasks, ${o.floodWindow} outstanding` : '',
    o.modes.includes('paced')
      ? `paced ${o.pacedRates.join('/')} tasks/s × ${o.pacedMs / 1000} s`
      : '',
    o.modes.includes('http') ? `http ${o.httpConnections} connections × ${o.httpMs / 1000} s` : '',
  ].filter(Boolean);
  return `settings: ${modes.join('; ')}; ${o.workers} workers × concurrency ${o.concurrency}; ${o.reps} repetition(s), interleaved; service log level ${o.serviceLogLevel}; router and registry-sync from ${o.build}`;
}

/**
 * 1 when a run had failed tasks (a bug), else 0; says so, and how many runs ended with tasks
 * still waiting (a system that could not keep up with an open-loop rate: a figure, not an error).
 */
function failedRuns(records: Records, say: (line: string) => void): number {
  const all = Object.values(records).flatMap((byKind) => Object.values(byKind).flat());
  const failed = all.filter((r) => r.result.failed > 0);
  const late = all.filter((r) => r.result.timedOut);
  if (late.length > 0)
    say(
      `${late.length} run(s) ended with tasks still waiting for a result (the system could not keep up): see the notes column`,
    );
  if (failed.length === 0) return 0;
  say(`${failed.length} run(s) had failed tasks; first: ${failed[0]?.result.firstError ?? '?'}`);
  return 1;
}

/** `--modes relay`: the SDK agent against the relays, then one JSON line. */
function printRelayComparison(
  records: Records,
  opts: BenchOptions,
  machine: string,
  session: Session,
): void {
  const systems = opts.systems.filter(
    (s): s is RelaySystemName => s === 'reach' || s === 'relay-http' || s === 'relay-a2a',
  );
  out(`Agent-Reach relay comparison, ${new Date().toISOString()}`);
  out(machine);
  out(
    `settings: flood ${opts.floodTasks} tasks, ${opts.floodWindow} outstanding; paced ${opts.pacedRates.join('/')} tasks/s × ${opts.pacedMs / 1000} s; ` +
      `${opts.workers} agent(s) of max_concurrency ${opts.concurrency}, no-op (relays: one relay process, the demo server its own process); ${opts.reps} repetition(s), interleaved`,
  );
  out('');
  out(
    'medians over repetitions; latencies in ms, submit → the caller holds the result; CPU in ms per task from the floods (total: every process but the endpoint server, Redis included)',
  );
  out(relayTable(records, systems));
  out('');
  const { lines, json } = relayTargets(records, systems);
  out('Redis commands per task, flood (commands run inside scripts included):');
  for (const line of commandLines(records, systems)) out(`  ${line}`);
  out('');
  out('targets (not gates):');
  for (const line of lines) out(`  ${line}`);
  const rss = session.children
    .list()
    .filter((c) => (c.role === 'workers' || c.role === 'endpoint') && !c.hasExited())
    .map((c) => `${c.name} ${processRssMiB(c.pid).toFixed(0)}`);
  out('');
  out(`resident memory after the runs, MiB: ${rss.join(', ')}`);
  out(JSON.stringify(json));
}

/**
 * Stops the session (the profiles are written as the processes exit), then prints each profile
 * cut to the first measured run of the profiled system's first mode.
 */
async function printProfiles(
  session: Session,
  records: Records,
  opts: BenchOptions,
  profileDir: string,
): Promise<void> {
  await session.close();
  const names = new Map(session.children.list().map((c) => [c.pid, c.name]));
  out('');
  // A paced mode's runs are keyed by rate: paced2000.
  const mode = opts.modes[0] ?? 'flood';
  const system = opts.systems[0] ?? 'reach';
  const [runKey, runs] = Object.entries(records[system] ?? {}).find(([key]) =>
    key.startsWith(mode),
  ) ?? [mode, []];
  const window = runs[0]?.window;
  out(
    `CPU profiles, cut to the measured ${system} ${runKey} run (${window ? ((window.toMs - window.fromMs) / 1000).toFixed(1) : '?'} s):`,
  );
  for (const { file, pid, profile } of await readProfiles(profileDir)) {
    out(
      renderSummary(
        `${names.get(pid) ?? `pid ${pid}`} (${file})`,
        summarizeProfile(profile, 20, window),
      ),
    );
    out('');
  }
}

async function runE2e(opts: BenchOptions): Promise<number> {
  const profileDir = opts.profile
    ? join(WORK_DIR, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'))
    : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const session = new Session(opts, log, profileDir);
  let stopping = false;
  const stop = (why: string, code: number) => {
    if (stopping) {
      session.killNow();
      process.exit(code);
    }
    stopping = true;
    log(`${why}: stopping every process`);
    void session.close().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => stop('interrupted', 130));
  process.once('SIGTERM', () => stop('terminated', 143));
  process.on('exit', () => session.killNow());
  const deadline = setTimeout(
    () => stop(`the session passed its ${opts.deadlineMs / 1000} s bound`, 1),
    opts.deadlineMs,
  );
  deadline.unref();

  const started = Date.now();
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  let code: number;
  try {
    await session.start();
    if (opts.fairness) {
      const fairnessCode = await runFairness(session, opts, out, log);
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return fairnessCode;
    }
    if (opts.fleet) {
      const fleetCode = await runFleet(session, opts, out, log);
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return fleetCode;
    }
    if (opts.relay === 'fleet') {
      out(`Agent-Reach relay fleet, ${new Date().toISOString()}`);
      out(
        `machine: ${cpus().length} vCPUs (${cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, load average at start ${load}`,
      );
      const fleetCode = await runRelayFleet(session, opts, out, log);
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return fleetCode;
    }
    const records = await session.run();
    const roleMap = new Map<SystemName, { all: Set<Role>; queued: Set<Role> }>();
    for (const s of session.systems) {
      roleMap.set(s.name, {
        all: new Set([...s.processes.map((p) => p.role), 'redis']),
        queued: new Set([
          ...s.processes.filter((p) => !s.httpOnly.includes(p)).map((p) => p.role),
          'redis',
        ]),
      });
    }
    const rolesOf = (system: SystemName, kind: string): ReadonlySet<Role> => {
      const r = roleMap.get(system);
      return (kind === 'http' ? r?.all : r?.queued) ?? new Set();
    };
    const machine = `machine: ${cpus().length} vCPUs (${cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, load average at start ${load} (shared machine: absolute figures are noisy, ratios within the run are steadier)`;
    if (opts.relay === 'compare') {
      printRelayComparison(records, opts, machine, session);
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return failedRuns(records, log);
    }
    if (opts.topology) {
      printTopologyReport(out, records, opts, rolesOf, machine, session.placements());
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return failedRuns(records, log);
    }
    if (opts.routerOnly) {
      code = failedRuns(records, log);
      if (profileDir) await printProfiles(session, records, opts, profileDir);
      printRouterOnlyReport(out, records, opts, machine, session.pinningPlan(), rolesOf);
      log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return code;
    }
    out(`Agent-Reach benchmark, ${new Date().toISOString()}`);
    out(machine);
    out(settingsLine(opts));
    out('');
    out(
      'medians over repetitions; latencies in ms (submit → worker started the task, submit → caller holds the result); CPU in seconds per 1,000 tasks',
    );
    out(
      table(
        records,
        opts.systems,
        runPlan(opts).map((k) => k.key),
        rolesOf,
      ),
    );
    out('');
    out('Redis commands per task, flood (commands run inside scripts included):');
    for (const line of commandLines(records, opts.systems)) out(`  ${line}`);
    out("Redis µs per task, flood, by command (a script's time holds the commands it ran):");
    for (const line of commandTimeLines(records, opts.systems)) out(`  ${line}`);
    const hops = hopLines(records, opts.systems);
    if (hops.length > 0) {
      out(
        'Submit → the caller holds the result, by hop, ms (each repetition; bench/perf/src/systems/reach/hops.ts):',
      );
      for (const line of hops) out(`  ${line}`);
    }
    out('');
    const reachRss = () =>
      session.children
        .list()
        .filter((c) => c.name.startsWith('reach-') && !c.hasExited())
        .map((c) => `${c.name.slice('reach-'.length)} ${processRssMiB(c.pid).toFixed(0)}`);
    const rss = reachRss();
    if (rss.length > 0) {
      out(`Agent-Reach resident memory after the runs, MiB: ${rss.join(', ')}`);
      // What a service holds when the load is over, running: the runs of the other systems froze
      // it (SIGSTOP), and a frozen process gives nothing back (its idle compaction, V8's own).
      session.children.resumeAll();
      await new Promise((r) => setTimeout(r, RSS_SETTLE_MS));
      out(`… and ${RSS_SETTLE_MS / 1000} s later, idle: ${reachRss().join(', ')}`);
    }
    out('');
    out('targets (issue 16):');
    for (const line of targetLines(records)) out(`  ${line}`);
    code = failedRuns(records, log);
    const gc = gcLines(records, opts.systems);
    if (gc.length > 0) {
      out('');
      out('router GC during the measured runs (--trace-gc), medians over repetitions:');
      for (const line of gc) out(`  ${line}`);
    }
    if (profileDir) await printProfiles(session, records, opts, profileDir);
    log(`session took ${((Date.now() - started) / 1000).toFixed(0)} s`);
    out(headlineJson(headline(records)));
  } catch (err: unknown) {
    // Once stopping (Ctrl-C, deadline), runs fail because their processes are going away.
    if (!stopping)
      log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    code = 1;
  } finally {
    clearTimeout(deadline);
    await session.close();
  }
  return code;
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err: unknown) {
    if (err instanceof UsageError) {
      (err.helped ? process.stdout : process.stderr).write(`${err.message}\n`);
      return err.helped ? 0 : 2;
    }
    throw err;
  }
  if (opts.routing) {
    out(await runRoutingBench(out, opts.quick));
    return 0;
  }
  try {
    const { build, note } = chooseServiceBuild(opts.from);
    opts.build = build;
    log(note);
  } catch (err: unknown) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  return runE2e(opts);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
