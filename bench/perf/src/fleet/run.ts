/**
 * `npm run bench -- --modes fleet`: the control plane at fleet size. For each `--agents` size,
 * simulated agents (real registrations, tokens and inboxes, several hundred to thousands per
 * process) against one registry-sync and one router: what they cost idle with single and batched
 * heartbeats, snapshot bytes, submit latency, how fast a new agent is routable, the registration
 * rate and a registration storm, and 10 % of the fleet flapping. A table, derived per-agent and
 * per-change costs, and one JSON line.
 */
import { cpus, loadavg } from 'node:os';
import type { BenchOptions } from '../options.ts';
import { readProfiles, renderSummary, summarizeProfile } from '../profile/summary.ts';
import type { Session } from '../session.ts';
import { keptUp } from './figures.ts';
import { costLines, fleetEvents, fleetJson, fleetTable } from './report.ts';
import { runFleetSize, type FleetSizeResult, type FleetTiming } from './size-run.ts';

/** Phase lengths: production cadences, windows long enough to hold several heartbeat rounds. */
export function fleetTiming(opts: BenchOptions): FleetTiming {
  return opts.quick
    ? {
        idleMs: opts.idleMs,
        churnMs: 20_000,
        settleMs: 2000,
        stormSettleMs: 5000,
        pacedRate: 100,
        pacedS: 3,
        registerTimeoutMs: 60_000,
      }
    : {
        idleMs: opts.idleMs,
        churnMs: 40_000,
        settleMs: 12_000,
        stormSettleMs: 20_000,
        pacedRate: 100,
        pacedS: 10,
        registerTimeoutMs: 5 * 60_000,
      };
}

/** Runs every size in turn, stopping at the first that could not keep up; prints the report. */
export async function runFleet(
  session: Session,
  opts: BenchOptions,
  out: (line: string) => void,
  log: (line: string) => void,
): Promise<number> {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const timing = fleetTiming(opts);
  const results: FleetSizeResult[] = [];
  const skipped: string[] = [];
  for (const agents of opts.fleetSizes) {
    const last = results.at(-1);
    if (last && !keptUp(last.single) && !keptUp(last.batch)) {
      skipped.push(
        `${agents}: not run, ${last.agents} agents could not keep their heartbeats in either mode`,
      );
      continue;
    }
    try {
      results.push(await runFleetSize(session, opts, agents, timing, log));
    } catch (err: unknown) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      skipped.push(`${agents}: stopped, ${why}`);
      log(`fleet of ${agents} stopped: ${why}`);
      break;
    }
  }
  out(`Agent-Reach fleet, ${new Date().toISOString()}`);
  out(
    `machine: ${cpus().length} vCPUs (${cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, load average at start ${load}`,
  );
  out(
    `settings: production heartbeat (5 s), probe (10 s), sweep and snapshot cadences; windows: idle ${timing.idleMs / 1000} s per heartbeat mode, churn ${timing.churnMs / 1000} s (10 % of the agents beat every 20 s); paced ${timing.pacedRate}/s × ${timing.pacedS} s`,
  );
  out('');
  out(
    'cores = share of one CPU over the window; MiB = resident memory at its end; snapshot KiB/s = full snapshots + deltas written (what each router reads)',
  );
  for (const line of fleetTable(results)) out(line);
  out('');
  for (const r of results) for (const line of fleetEvents(r)) out(line);
  for (const s of skipped) out(`not measured: ${s}`);
  out('');
  out('per-agent and per-change costs (registry-sync):');
  for (const r of results) for (const line of costLines(r)) out(line);
  if (session.profileDir) {
    const names = new Map(
      results.flatMap((r) => [
        [r.pids.sync, `registry-sync at ${r.agents} agents`],
        [r.pids.router, `router at ${r.agents} agents`],
      ]),
    );
    out('');
    out('CPU profiles over each whole size (start-up and registration included):');
    for (const { file, pid, profile } of await readProfiles(session.profileDir))
      if (names.has(pid))
        out(renderSummary(`${names.get(pid)} (${file})`, summarizeProfile(profile, 20)));
  }
  out(JSON.stringify({ fleet_sizes: results.length, ...fleetJson(results) }));
  return results.length > 0 ? 0 : 1;
}
