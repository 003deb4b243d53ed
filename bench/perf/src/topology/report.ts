import type { RunRecord } from '../measure.ts';
import type { TopologySystemName } from '../options.ts';
import { isRouterProcess, med, pairedRatio } from '../report.ts';
import type { Records } from '../session.ts';
import { median, round } from '../stats.ts';

/** No master should take more than this share of the cluster's Redis CPU (issue 17). */
export const MASTER_SHARE_TARGET = 0.45;

/** One part of a whole: a Redis master's or a router's CPU, and its share of their sum. */
export interface Share {
  name: string;
  value: number;
  /** value ÷ the sum of every value; NaN when the sum is not positive. */
  share: number;
}

/** Each value's share of their sum, in the order given. Missing (NaN) values count as 0. */
export function shares(values: Record<string, number>): Share[] {
  const entries = Object.entries(values).map(
    ([name, v]) => [name, Number.isFinite(v) ? v : 0] as const,
  );
  const total = entries.reduce((sum, [, v]) => sum + v, 0);
  return entries.map(([name, value]) => ({
    name,
    value,
    share: total > 0 ? value / total : NaN,
  }));
}

/** The largest share; NaN when there is none. */
export function maxShare(parts: readonly Share[]): number {
  const xs = parts.map((p) => p.share).filter(Number.isFinite);
  return xs.length > 0 ? Math.max(...xs) : NaN;
}

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)} %` : '–');
const us = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const runs = (records: Records, system: TopologySystemName): RunRecord[] =>
  records[system]?.flood ?? [];

/**
 * Per name, the median over a system's flood runs of `pick(run)[name]` (CPU seconds per 1,000
 * tasks), as CPU µs per task.
 */
function medianUsPerTask(
  records: Records,
  system: TopologySystemName,
  pick: (r: RunRecord) => Record<string, number>,
  keep: (name: string) => boolean = () => true,
): Record<string, number> {
  const rs = runs(records, system);
  const names = [...new Set(rs.flatMap((r) => Object.keys(pick(r))))].filter(keep);
  const out: Record<string, number> = {};
  for (const n of names) out[n] = median(rs.map((r) => pick(r)[n] ?? NaN)) * 1000;
  return out;
}

/** Redis CPU µs per task of each master of a system (median over its floods) and their shares. */
export function masterShares(records: Records, system: TopologySystemName): Share[] {
  return shares(medianUsPerTask(records, system, (r) => r.redisNodes));
}

/** CPU µs per task of each router of a system (median over its floods) and their shares. */
export function routerShares(records: Records, system: TopologySystemName): Share[] {
  return shares(medianUsPerTask(records, system, (r) => r.procCpu, isRouterProcess));
}

/** One master's part of a system's Redis CPU in its floods (medians over repetitions). */
export interface MasterCpu extends Share {
  system: TopologySystemName;
  /** CPU ms the master used during one flood. */
  cpuMs: number;
  /** Tasks/s it could carry at one core: 1 s ÷ its CPU per task (`value`, µs). */
  perCore: number;
}

/**
 * Each master's CPU ms in a flood, its µs per task and share of the system's Redis CPU, and the
 * tasks/s it could carry at a core of its own: on a machine with a core per master, the busiest
 * master's ceiling is the cluster's Redis ceiling.
 */
export function masterCpu(records: Records, system: TopologySystemName): MasterCpu[] {
  const rs = runs(records, system);
  return masterShares(records, system).map((part) => ({
    ...part,
    system,
    // redisNodes is CPU s per 1,000 tasks: × completed tasks = CPU ms in the run.
    cpuMs: median(rs.map((r) => (r.redisNodes[part.name] ?? NaN) * r.result.completed)),
    perCore: part.value > 0 ? 1e6 / part.value : NaN,
  }));
}

/** The per-master table of every system that ran: CPU ms per flood, µs per task, share, ceiling. */
export function masterTable(records: Records, systems: readonly TopologySystemName[]): string {
  const head = ['system', 'master', 'CPU ms/flood', 'µs/task', 'share', 'tasks/s at 1 core'];
  const rows = systems.flatMap((system) =>
    masterCpu(records, system).map((m) => [
      system,
      m.name,
      us(m.cpuMs),
      us(m.value),
      pct(m.share),
      us(m.perCore),
    ]),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** `name µs (share)`, joined. */
function partsText(parts: readonly Share[]): string {
  return parts.map((p) => `${p.name} ${us(p.value)} µs (${pct(p.share)})`).join(', ');
}

/**
 * How each system's Redis CPU spreads over its masters, and each system's router CPU over its
 * routers, with the busiest master against the 45 % target (a figure, not a gate).
 */
export function spreadLines(records: Records, systems: readonly TopologySystemName[]): string[] {
  const lines: string[] = [];
  for (const system of systems) {
    if (runs(records, system).length === 0) continue;
    const masters = masterShares(records, system);
    if (masters.length > 1) {
      const top = maxShare(masters);
      const verdict = Number.isFinite(top)
        ? top <= MASTER_SHARE_TARGET
          ? 'met'
          : 'NOT met'
        : 'n/a';
      lines.push(
        `${system}: Redis CPU per task by master: ${partsText(masters)}; busiest ${pct(top)} (target ≤ ${pct(MASTER_SHARE_TARGET)}: ${verdict})`,
      );
    }
    const routers = routerShares(records, system);
    if (routers.length > 1) {
      const nginx =
        median(runs(records, system).map((r) => r.cpu.front)) * 1000 -
        routers.reduce((s, r) => s + r.value, 0);
      lines.push(
        `${system}: router CPU per task by router: ${partsText(routers)}; nginx ${us(nginx)} µs`,
      );
    }
  }
  return lines;
}

/** The per-task costs of one system's floods (medians), CPU in µs per task. */
export interface TaskCosts {
  tps: number;
  redisCommands: number;
  redisUs: number;
  /** The busiest master's (or the one Redis') CPU µs per task. */
  busiestRedisUs: number;
  /** Every router together (and nginx, when there is one). */
  frontUs: number;
  syncUs: number;
  workersUs: number;
  callerUs: number;
}

/** The per-task costs of a system's floods; NaN figures when it has none. */
export function taskCosts(records: Records, system: TopologySystemName): TaskCosts {
  const m = (f: (r: RunRecord) => number) => med(records, system, 'flood', f);
  const masters = masterShares(records, system);
  return {
    tps: m((r) => r.result.tps),
    redisCommands: m((r) => Object.values(r.commands).reduce((a, b) => a + b, 0)),
    redisUs: m((r) => r.cpu.redis) * 1000,
    busiestRedisUs: masters.length > 0 ? Math.max(...masters.map((p) => p.value)) : NaN,
    frontUs: m((r) => r.cpu.front) * 1000,
    syncUs: m((r) => r.cpu.sync) * 1000,
    workersUs: m((r) => r.cpu.workers) * 1000,
    callerUs: m((r) => r.cpu.caller) * 1000,
  };
}

/** Tasks/s one core could carry at `usPerTask` µs of CPU per task. */
const perCore = (usPerTask: number) => (usPerTask > 0 ? Math.round(1e6 / usPerTask) : NaN);

/**
 * The per-task costs, and what they predict for a machine with a core for each process: each
 * process' ceiling is one core ÷ its CPU per task. On a machine with fewer cores than processes
 * every process shares them, so the cluster spreads the work without going faster.
 */
export function costLines(
  records: Records,
  systems: readonly TopologySystemName[],
  cores: number,
): string[] {
  const lines: string[] = [];
  for (const system of systems) {
    if (runs(records, system).length === 0) continue;
    const c = taskCosts(records, system);
    lines.push(
      `${system}: ${c.redisCommands.toFixed(1)} Redis commands/task; CPU µs/task: Redis ${us(c.redisUs)} (busiest ${system === 'one-redis' ? 'and only ' : ''}node ${us(c.busiestRedisUs)}), router${system === 'cluster-3r' ? 's + nginx' : ''} ${us(c.frontUs)}, registry-sync ${us(c.syncUs)}, agents ${us(c.workersUs)}, caller ${us(c.callerUs)}`,
    );
  }
  const one = taskCosts(records, 'one-redis');
  const cl = taskCosts(records, 'cluster');
  const ceilings = [
    Number.isFinite(one.busiestRedisUs) ? `one Redis ${perCore(one.busiestRedisUs)} tasks/s` : '',
    Number.isFinite(cl.busiestRedisUs)
      ? `a 3-master cluster ${perCore(cl.busiestRedisUs)} tasks/s (its busiest master)`
      : '',
    `one router ${perCore(cl.frontUs > 0 ? cl.frontUs : one.frontUs)} tasks/s per router`,
    `one registry-sync ${perCore(cl.syncUs > 0 ? cl.syncUs : one.syncUs)} tasks/s per instance`,
  ].filter(Boolean);
  lines.push(`ceilings at one core per process (1 s ÷ CPU per task): ${ceilings.join('; ')}`);
  lines.push(
    `this machine has ${cores} vCPU(s) for every process of a run (Redis, routers, registry-sync, agents, caller): the cluster and the 3 routers spread the work over more processes, they cannot make it faster here; the ceilings above, not the tasks/s, say what a larger machine would do`,
  );
  return lines;
}

/** The last line of `--topology cluster`: its figures as one JSON object. */
export interface TopologyHeadline {
  one_redis_tps: number;
  cluster_tps: number;
  cluster_3r_tps: number;
  /** Median over repetitions of cluster ÷ one-redis tasks/s, each repetition's pair. */
  cluster_vs_one_redis: number;
  /** The same for cluster-3r ÷ cluster (3 routers against 1, both on the cluster). */
  three_routers_vs_one: number;
  /** The busiest master's share of the cluster's Redis CPU, one router. */
  max_master_share: number;
  /** The same with 3 routers. */
  max_master_share_3r: number;
  redis_cmds_per_task_one_redis: number;
  redis_cmds_per_task_cluster: number;
  redis_cpu_us_per_task_one_redis: number;
  redis_cpu_us_per_task_cluster: number;
  busiest_master_cpu_us_per_task: number;
  router_cpu_us_per_task: number;
  sync_cpu_us_per_task: number;
}

/** The keys of {@link TopologyHeadline}, in order. */
export const TOPOLOGY_HEADLINE_KEYS: readonly (keyof TopologyHeadline)[] = [
  'one_redis_tps',
  'cluster_tps',
  'cluster_3r_tps',
  'cluster_vs_one_redis',
  'three_routers_vs_one',
  'max_master_share',
  'max_master_share_3r',
  'redis_cmds_per_task_one_redis',
  'redis_cmds_per_task_cluster',
  'redis_cpu_us_per_task_one_redis',
  'redis_cpu_us_per_task_cluster',
  'busiest_master_cpu_us_per_task',
  'router_cpu_us_per_task',
  'sync_cpu_us_per_task',
];

/** The headline figures of `--topology cluster`. */
export function topologyHeadline(records: Records): TopologyHeadline {
  const one = taskCosts(records, 'one-redis');
  const cl = taskCosts(records, 'cluster');
  const tps = (r: RunRecord) => r.result.tps;
  return {
    one_redis_tps: one.tps,
    cluster_tps: cl.tps,
    cluster_3r_tps: taskCosts(records, 'cluster-3r').tps,
    cluster_vs_one_redis: pairedRatio(records, 'cluster', 'one-redis', 'flood', tps),
    three_routers_vs_one: pairedRatio(records, 'cluster-3r', 'cluster', 'flood', tps),
    max_master_share: maxShare(masterShares(records, 'cluster')),
    max_master_share_3r: maxShare(masterShares(records, 'cluster-3r')),
    redis_cmds_per_task_one_redis: one.redisCommands,
    redis_cmds_per_task_cluster: cl.redisCommands,
    redis_cpu_us_per_task_one_redis: one.redisUs,
    redis_cpu_us_per_task_cluster: cl.redisUs,
    busiest_master_cpu_us_per_task: cl.busiestRedisUs,
    router_cpu_us_per_task: cl.frontUs,
    sync_cpu_us_per_task: cl.syncUs,
  };
}

/** The JSON line: rounded figures in key order (NaN becomes null). */
export function topologyHeadlineJson(h: TopologyHeadline): string {
  const out: Record<string, number> = {};
  for (const k of TOPOLOGY_HEADLINE_KEYS) out[k] = round(h[k]);
  return JSON.stringify(out);
}
