import type { RunRecord } from './measure.ts';
import type { SystemName } from './options.ts';
import type { Role } from './proc/children.ts';
import type { Records } from './session.ts';
import { median, round } from './stats.ts';

/** The last line `npm run bench` prints, exactly these keys (issues 6 and 16). */
export interface Headline {
  reach_tps: number;
  bullmq_tps: number;
  floor_tps: number;
  ratio_vs_bullmq: number;
  ratio_vs_floor: number;
  paced2000_p50_ms: number;
  paced2000_p99_ms: number;
  bullmq_paced2000_p99_ms: number;
  redis_cpu_per_task_ratio_vs_bullmq: number;
  /** Agent-Reach's Redis commands per task in a flood, those run inside scripts included. */
  redis_cmds_per_task: number;
  /** Agent-Reach's script calls (EVALSHA, EVAL, FCALL) per task in a flood. */
  script_calls_per_task: number;
  /** CPU ms per task of every process of Agent-Reach in a flood, Redis included. */
  cpu_ms_per_task: number;
  /** The same for BullMQ. */
  bullmq_cpu_ms_per_task: number;
  /** Redis' CPU µs per task in Agent-Reach's flood. */
  redis_cpu_us_per_task: number;
  /** The router process' CPU ms per task in Agent-Reach's flood. */
  router_cpu_ms_per_task: number;
}

/** The keys of {@link Headline}, in order. */
export const HEADLINE_KEYS: readonly (keyof Headline)[] = [
  'reach_tps',
  'bullmq_tps',
  'floor_tps',
  'ratio_vs_bullmq',
  'ratio_vs_floor',
  'paced2000_p50_ms',
  'paced2000_p99_ms',
  'bullmq_paced2000_p99_ms',
  'redis_cpu_per_task_ratio_vs_bullmq',
  'redis_cmds_per_task',
  'script_calls_per_task',
  'cpu_ms_per_task',
  'bullmq_cpu_ms_per_task',
  'redis_cpu_us_per_task',
  'router_cpu_ms_per_task',
];

/** The commands that call a script (their inner commands are counted on their own too). */
const SCRIPT_CALLS: readonly string[] = [
  'evalsha',
  'eval',
  'evalsha_ro',
  'eval_ro',
  'fcall',
  'fcall_ro',
];

const runs = (records: Records, system: SystemName, kind: string): RunRecord[] =>
  records[system]?.[kind] ?? [];

/** Median over repetitions of one figure. */
export function med(
  records: Records,
  system: SystemName,
  kind: string,
  f: (r: RunRecord) => number,
): number {
  return median(runs(records, system, kind).map(f));
}

/**
 * Median over repetitions of `f(a) / f(b)`, a and b from the same repetition: the systems ran
 * side by side, so a repetition's ratio is steadier than the ratio of two medians.
 */
export function pairedRatio(
  records: Records,
  a: SystemName,
  b: SystemName,
  kind: string,
  f: (r: RunRecord) => number,
): number {
  const xs = runs(records, a, kind);
  const ys = runs(records, b, kind);
  return median(xs.map((x, i) => (ys[i] ? f(x) / f(ys[i]) : NaN)));
}

const tps = (r: RunRecord) => r.result.tps;
const p50 = (r: RunRecord) => r.result.done.p50;
const p99 = (r: RunRecord) => r.result.done.p99;
const redisCpu = (r: RunRecord) => r.cpu.redis;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const commandsPerTask = (r: RunRecord) => sum(Object.values(r.commands));
const scriptCallsPerTask = (r: RunRecord) => sum(SCRIPT_CALLS.map((c) => r.commands[c] ?? 0));
/** CPU seconds per 1,000 tasks of every process the run used, Redis included: ms per task. */
const cpuMs = (r: RunRecord) => r.cpu.total;

/** True for a router process' name: `reach-router`, or `cluster-3r-router-1` of several. */
export const isRouterProcess = (name: string): boolean => /-router(-\d+)?$/.test(name);

/** CPU ms per task of a run's router processes (nginx in front of several not included). */
export const routerCpuMs = (r: RunRecord): number => {
  const routers = Object.entries(r.procCpu).filter(([name]) => isRouterProcess(name));
  return routers.length > 0 ? sum(routers.map(([, ms]) => ms)) : NaN;
};

/** The headline figures from the records. */
export function headline(records: Records): Headline {
  return {
    reach_tps: med(records, 'reach', 'flood', tps),
    bullmq_tps: med(records, 'bullmq', 'flood', tps),
    floor_tps: med(records, 'floor', 'flood', tps),
    ratio_vs_bullmq: pairedRatio(records, 'reach', 'bullmq', 'flood', tps),
    ratio_vs_floor: pairedRatio(records, 'reach', 'floor', 'flood', tps),
    paced2000_p50_ms: med(records, 'reach', 'paced2000', p50),
    paced2000_p99_ms: med(records, 'reach', 'paced2000', p99),
    bullmq_paced2000_p99_ms: med(records, 'bullmq', 'paced2000', p99),
    redis_cpu_per_task_ratio_vs_bullmq: pairedRatio(records, 'reach', 'bullmq', 'flood', redisCpu),
    redis_cmds_per_task: med(records, 'reach', 'flood', commandsPerTask),
    script_calls_per_task: med(records, 'reach', 'flood', scriptCallsPerTask),
    cpu_ms_per_task: med(records, 'reach', 'flood', cpuMs),
    bullmq_cpu_ms_per_task: med(records, 'bullmq', 'flood', cpuMs),
    redis_cpu_us_per_task: med(records, 'reach', 'flood', redisCpu) * 1000,
    router_cpu_ms_per_task: med(records, 'reach', 'flood', routerCpuMs),
  };
}

/** The JSON line: rounded figures, in the key order of the issue (NaN becomes null). */
export function headlineJson(h: Headline): string {
  const out: Record<string, number> = {};
  for (const k of HEADLINE_KEYS) out[k] = round(h[k]);
  return JSON.stringify(out);
}

const ROLE_COLUMNS: readonly [Role | 'total', string][] = [
  ['caller', 'caller'],
  ['front', 'router/gw'],
  ['sync', 'sync'],
  ['workers', 'workers'],
  ['redis', 'redis'],
  ['total', 'total'],
];

function fmt(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

/** The results table: medians over repetitions, one row per run kind and system. */
export function table(
  records: Records,
  systems: readonly SystemName[],
  kinds: readonly string[],
  rolesOf: (system: SystemName, kind: string) => ReadonlySet<Role>,
): string {
  const head = [
    'run',
    'system',
    'tasks/s',
    'recv p50',
    'recv p99',
    'done p50',
    'done p99',
    ...ROLE_COLUMNS.map(([, h]) => h),
    'notes',
  ];
  const rows: string[][] = [];
  for (const kind of kinds) {
    for (const system of systems) {
      const rs = runs(records, system, kind);
      if (rs.length === 0) continue;
      const m = (f: (r: RunRecord) => number) => med(records, system, kind, f);
      const failed = rs.reduce((n, r) => n + r.result.failed, 0);
      const lost = rs.reduce(
        (n, r) =>
          n + (r.result.timedOut ? r.result.submitted - r.result.completed - r.result.failed : 0),
        0,
      );
      const retries = rs.reduce((n, r) => n + r.result.retries, 0);
      const queued = rs.reduce((n, r) => n + (r.queued ?? 0), 0);
      const notes = [
        failed ? `${failed} failed` : '',
        lost ? `${lost} no result` : '',
        retries ? `${retries} retried` : '',
        queued ? `${queued} queued` : '',
      ]
        .filter(Boolean)
        .join(', ');
      rows.push([
        kind,
        system,
        fmt(m(tps), 0),
        fmt(
          m((r) => r.result.received.p50),
          2,
        ),
        fmt(
          m((r) => r.result.received.p99),
          2,
        ),
        fmt(m(p50), 2),
        fmt(m(p99), 2),
        ...ROLE_COLUMNS.map(([role]) =>
          role === 'total' || role === 'redis' || rolesOf(system, kind).has(role)
            ? fmt(
                m((r) => r.cpu[role]),
                3,
              )
            : '–',
        ),
        notes,
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i < 2 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Per command, the median over a system's flood runs of `pick(run)[command]`, at least `min`, busiest first. */
function floodMedians(
  records: Records,
  system: SystemName,
  pick: (r: RunRecord) => Record<string, number>,
  min: number,
): (readonly [string, number])[] {
  const rs = runs(records, system, 'flood');
  const names = new Set(rs.flatMap((r) => Object.keys(pick(r))));
  return [...names]
    .map((cmd) => [cmd, median(rs.map((r) => pick(r)[cmd] ?? 0))] as const)
    .filter(([, n]) => n >= min)
    .sort((a, b) => b[1] - a[1]);
}

/** Redis commands per completed task in the flood runs (median), busiest first. */
export function commandLines(records: Records, systems: readonly SystemName[]): string[] {
  return systems
    .filter((system) => runs(records, system, 'flood').length > 0)
    .map((system) => {
      const per = floodMedians(records, system, (r) => r.commands, 0.01);
      const total = per.reduce((s, [, n]) => s + n, 0);
      return `${system}: ${total.toFixed(1)} commands/task — ${per.map(([c, n]) => `${c} ${n.toFixed(2)}`).join(', ')}`;
    });
}

/**
 * Redis time per completed task in the flood runs (median), by command, busiest first. A
 * script's time holds the commands it ran, which also appear on their own: the line shows the
 * scripts' share next to the plain commands', not a sum.
 */
export function commandTimeLines(records: Records, systems: readonly SystemName[]): string[] {
  return systems
    .filter((system) => runs(records, system, 'flood').length > 0)
    .map(
      (system) =>
        `${system}: ${floodMedians(records, system, (r) => r.commandUsec, 0.1)
          .map(([c, us]) => `${c} ${us.toFixed(1)}`)
          .join(', ')}`,
    );
}

/** How the figures stand against the targets of issue 16 (ratios within one run). */
export function targetLines(records: Records): string[] {
  const h = headline(records);
  const http = pairedRatio(records, 'reach', 'bullmq', 'http', tps);
  const pacedP99 = pairedRatio(records, 'reach', 'bullmq', 'paced2000', p99);
  const cpu = pairedRatio(records, 'reach', 'bullmq', 'flood', cpuMs);
  const check = (label: string, value: number, ok: boolean, target: string) =>
    `${ok ? 'met    ' : Number.isFinite(value) ? 'NOT met' : 'n/a    '}  ${label}: ${fmt(value, 2)} (target ${target})`;
  return [
    check(
      'Redis commands per task, Agent-Reach flood',
      h.redis_cmds_per_task,
      h.redis_cmds_per_task <= 12,
      '≤ 12',
    ),
    check(
      'script calls per task, Agent-Reach flood',
      h.script_calls_per_task,
      h.script_calls_per_task <= 2,
      '≤ 2',
    ),
    check(
      'Redis CPU per task, Agent-Reach / BullMQ',
      h.redis_cpu_per_task_ratio_vs_bullmq,
      h.redis_cpu_per_task_ratio_vs_bullmq <= 0.5,
      '≤ 0.5',
    ),
    check('CPU per task of all processes, flood, Agent-Reach / BullMQ', cpu, cpu <= 0.85, '≤ 0.85'),
    check(
      'flood, Agent-Reach / BullMQ tasks/s',
      h.ratio_vs_bullmq,
      h.ratio_vs_bullmq >= 1.5,
      '≥ 1.5',
    ),
    check('http request-per-task, Agent-Reach / BullMQ req/s', http, http >= 1.5, '≥ 1.5'),
    check('paced 2,000/s completion p99, Agent-Reach / BullMQ', pacedP99, pacedP99 <= 1, '≤ 1.0'),
  ];
}

/**
 * `--trace-gc`: per system and run kind, the router's collections during the run, their final
 * pauses and incremental marking, medians over repetitions; systems not traced are left out.
 */
export function gcLines(records: Records, systems: readonly SystemName[]): string[] {
  const lines: string[] = [];
  for (const system of systems) {
    for (const [kind, rs] of Object.entries(records[system] ?? {})) {
      if (!rs.some((r) => r.gc)) continue;
      const m = (f: (r: RunRecord) => number) => median(rs.map(f));
      const count = m((r) => r.gc?.count ?? NaN);
      const pause = m((r) => r.gc?.pauseMs ?? NaN);
      const marking = m((r) => r.gc?.markingMs ?? NaN);
      const perK = m((r) =>
        r.gc && r.result.completed > 0 ? (r.gc.count * 1000) / r.result.completed : NaN,
      );
      lines.push(
        `${system} ${kind}: ${fmt(count, 0)} collections (${fmt(perK, 1)} per 1,000 tasks), pauses ${fmt(pause, 1)} ms, incremental marking ${fmt(marking, 1)} ms`,
      );
    }
  }
  return lines;
}

/**
 * Where each run kind's submit → held went, hop by hop, for the systems whose caller tells
 * (Agent-Reach: systems/reach/hops.ts): a line per run kind and hop with the p50 and the p99 of
 * each repetition, in order.
 */
export function hopLines(records: Records, systems: readonly SystemName[]): string[] {
  const lines: string[] = [];
  for (const system of systems) {
    for (const [kind, rs] of Object.entries(records[system] ?? {})) {
      const hops = [...new Set(rs.flatMap((r) => Object.keys(r.result.hops ?? {})))];
      for (const hop of hops) {
        const each = (q: 'p50' | 'p99') =>
          rs.map((r) => fmt(r.result.hops?.[hop]?.[q] ?? NaN, 0)).join(' / ');
        lines.push(
          `${system} ${kind.padEnd(10)} ${hop.padEnd(18)} p50 ${each('p50')}   p99 ${each('p99')}`,
        );
      }
    }
  }
  return lines;
}
