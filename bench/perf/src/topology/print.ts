import { cpus } from 'node:os';
import type { BenchOptions, SystemName } from '../options.ts';
import type { Role } from '../proc/children.ts';
import { runPlan } from '../plan.ts';
import { commandLines, commandTimeLines, table } from '../report.ts';
import type { Records } from '../session.ts';
import {
  costLines,
  masterTable,
  spreadLines,
  topologyHeadline,
  topologyHeadlineJson,
} from './report.ts';

/** Prints the report of `--topology cluster`; its last line is the JSON headline. */
export function printTopologyReport(
  out: (line: string) => void,
  records: Records,
  opts: BenchOptions,
  rolesOf: (system: SystemName, kind: string) => ReadonlySet<Role>,
  machineLine: string,
  placements: Partial<Record<SystemName, string>>,
): void {
  const systems = opts.systems.filter(
    (s): s is 'one-redis' | 'cluster' | 'cluster-3r' =>
      s === 'one-redis' || s === 'cluster' || s === 'cluster-3r',
  );
  out(`Agent-Reach on one Redis against a Redis Cluster, ${new Date().toISOString()}`);
  out(machineLine);
  out(
    `settings: flood ${opts.floodTasks} tasks, ${opts.floodWindow} outstanding; ${opts.agents} agents over ${opts.capabilities} capabilities in ${opts.workers} processes, max_concurrency ${opts.concurrency} each; ${opts.reps} repetition(s), interleaved`,
  );
  out(
    `systems: one-redis = 1 Redis, 1 router; cluster = 3-master Redis Cluster, 1 router; cluster-3r = the same cluster, ${opts.routers} routers behind nginx (least_conn); 1 registry-sync each`,
  );
  out('');
  out(
    'medians over repetitions; latencies in ms; CPU in seconds per 1,000 tasks (= ms per task), Redis = every node of the system',
  );
  out(
    table(
      records,
      systems,
      runPlan(opts).map((k) => k.key),
      rolesOf,
    ),
  );
  out('');
  out('Spread (CPU µs per task, share of the whole):');
  for (const line of spreadLines(records, systems)) out(`  ${line}`);
  out('');
  out(
    "Redis CPU by master, medians over the floods (share = of the system's Redis CPU; tasks/s at 1 core = 1 s ÷ its µs per task):",
  );
  out(masterTable(records, systems));
  out('');
  out(
    `Where the one-slot keys every task touches live (REACH_SHARDS=${opts.shards}; a task's own keys and an agent's spread by their hash tags):`,
  );
  for (const [system, line] of Object.entries(placements)) out(`  ${system}: ${line}`);
  out('');
  out('Per-task costs (what predicts a larger machine):');
  for (const line of costLines(records, systems, cpus().length)) out(`  ${line}`);
  out('');
  out('Redis commands per task, flood, every node (commands run inside scripts included):');
  for (const line of commandLines(records, systems)) out(`  ${line}`);
  out("Redis µs per task, flood, by command (a script's time holds the commands it ran):");
  for (const line of commandTimeLines(records, systems)) out(`  ${line}`);
  out('');
  out(topologyHeadlineJson(topologyHeadline(records)));
}
