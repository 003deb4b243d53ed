import type { BenchOptions, RouterOnlySystemName, SystemName } from '../options.ts';
import type { Role } from '../proc/children.ts';
import type { PinningPlan } from '../proc/pin.ts';
import { commandLines } from '../report.ts';
import type { Records } from '../session.ts';
import {
  routerOnlyHeadline,
  routerOnlyHeadlineJson,
  routerOnlyTable,
  verdictLines,
} from './report.ts';

/** Where the processes ran, in a line. */
function pinningLine(plan: PinningPlan | undefined): string {
  if (!plan?.pinned) return `not pinned (${plan?.why ?? '?'}): every process ran on any CPU`;
  const { measured, rest } = plan.cpus;
  return `pinned with taskset: the router and the floor's server on CPU ${measured}; Redis, registry-sync, the stub agent and the callers on CPU ${rest}`;
}

/** Prints the report of `--modes router-only`; its last line is the JSON headline. */
export function printRouterOnlyReport(
  out: (line: string) => void,
  records: Records,
  opts: BenchOptions,
  machineLine: string,
  plan: PinningPlan | undefined,
  rolesOf: (system: SystemName, kind: string) => ReadonlySet<Role>,
): void {
  const systems = opts.systems.filter(
    (s): s is RouterOnlySystemName => s === 'router' || s === 'router-floor',
  );
  out(`Agent-Reach router alone on a core, ${new Date().toISOString()}`);
  out(machineLine);
  out(
    `settings: flood ${opts.floodTasks} tasks, ${opts.floodWindow} outstanding, POST /v1/tasks/batch; ${opts.workers} stub agents of max_concurrency ${opts.concurrency} in one process; ${opts.reps} repetition(s), interleaved${opts.traceGc ? '; router under --trace-gc' : ''}${opts.profile ? '; router under --cpu-prof (its CPU figures include the profiler)' : ''}`,
  );
  out(pinningLine(plan));
  out(
    "systems: router = Agent-Reach router + registry-sync + stub agent (plain Redis, one pipeline per read batch); router-floor = fastify with the same body and schemas, one XADD per task, its caller's requests held to at most the router's average tasks per request so far",
  );
  out('');
  out(
    'medians over repetitions; latencies in ms (submit → the caller holds the result; the floor answers at the XADD); CPU ms per task of the process under test (router / floor server), the others in ms per task too; core busy = its CPU time ÷ the flood wall time',
  );
  out(routerOnlyTable(records, systems, rolesOf));
  out('');
  for (const line of verdictLines(records)) out(line);
  out('');
  out('Redis commands per task, flood (commands run inside scripts included):');
  for (const line of commandLines(records, systems)) out(`  ${line}`);
  out('');
  out(routerOnlyHeadlineJson(routerOnlyHeadline(records), plan?.pinned ?? false));
}
