import type { RunRecord } from '../measure.ts';
import type { RouterOnlySystemName, SystemName } from '../options.ts';
import type { Role } from '../proc/children.ts';
import { med, pairedRatio } from '../report.ts';
import type { Records } from '../session.ts';
import { median, round } from '../stats.ts';

/** The CPU ms per task of the process under test: the router, or the floor's server. */
const frontMs = (r: RunRecord) => r.cpu.front;
const tps = (r: RunRecord) => r.result.tps;

/** Tasks/s one core carries at `msPerTask` CPU ms per task. */
export const tasksPerCore = (msPerTask: number): number => (msPerTask > 0 ? 1000 / msPerTask : NaN);

/** One system's flood figures, medians over repetitions. */
export interface RouterOnlyFigures {
  tps: number;
  doneP50: number;
  doneP99: number;
  /** CPU ms per task of the process under test. */
  cpuMs: number;
  /** 1000 ÷ cpuMs: what one core of it would carry. */
  perCore: number;
  /** Its CPU time ÷ the run's wall time: how busy its core was (1 = saturated). */
  coreBusy: number;
  /** Tasks per `POST /v1/tasks/batch` (retries included): what the HTTP cost is spread over. */
  tasksPerRequest: number;
  redisUs: number;
  syncMs: number;
  agentsMs: number;
  callerMs: number;
  /** `--trace-gc`: collections per run and their pauses, ms (NaN when not traced). */
  gcCount: number;
  gcPauseMs: number;
  gcMarkingMs: number;
  /** Runs with failed tasks or tasks without a result, and submissions sent again. */
  failed: number;
  retries: number;
}

/** The figures of one system of `--modes router-only`. */
export function figures(records: Records, system: RouterOnlySystemName): RouterOnlyFigures {
  const m = (f: (r: RunRecord) => number) => med(records, system, 'flood', f);
  const rs = records[system]?.flood ?? [];
  const cpuMs = m(frontMs);
  return {
    tps: m(tps),
    doneP50: m((r) => r.result.done.p50),
    doneP99: m((r) => r.result.done.p99),
    cpuMs,
    perCore: tasksPerCore(cpuMs),
    coreBusy: m((r) => (frontMs(r) * r.result.completed) / r.result.elapsedMs),
    tasksPerRequest: m((r) =>
      r.result.requests ? (r.result.submitted + r.result.retries) / r.result.requests : NaN,
    ),
    redisUs: m((r) => r.cpu.redis) * 1000,
    syncMs: m((r) => r.cpu.sync),
    agentsMs: m((r) => r.cpu.workers),
    callerMs: m((r) => r.cpu.caller),
    gcCount: m((r) => r.gc?.count ?? NaN),
    gcPauseMs: m((r) => r.gc?.pauseMs ?? NaN),
    gcMarkingMs: m((r) => r.gc?.markingMs ?? NaN),
    failed: rs.reduce(
      (n, r) =>
        n +
        r.result.failed +
        (r.result.timedOut ? r.result.submitted - r.result.completed - r.result.failed : 0),
      0,
    ),
    retries: rs.reduce((n, r) => n + r.result.retries, 0),
  };
}

function fmt(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

/** The table: one row per system, a dash for a role the system does not have. */
export function routerOnlyTable(
  records: Records,
  systems: readonly RouterOnlySystemName[],
  rolesOf: (system: SystemName, kind: string) => ReadonlySet<Role>,
): string {
  const traced = systems.some((s) => Number.isFinite(figures(records, s).gcCount));
  const head = [
    'system',
    'tasks/s',
    'done p50',
    'done p99',
    'CPU ms/task',
    'tasks/s per core',
    'core busy',
    'tasks/request',
    'redis µs/task',
    'sync',
    'agents',
    'caller',
    ...(traced ? ['GC pauses', 'GC ms'] : []),
    'notes',
  ];
  const rows = systems
    .filter((s) => (records[s]?.flood ?? []).length > 0)
    .map((s) => {
      const f = figures(records, s);
      const has = rolesOf(s, 'flood');
      const role = (r: Role, v: number) => (has.has(r) ? fmt(v, 3) : '–');
      const notes = [
        f.failed ? `${f.failed} failed or without result` : '',
        f.retries ? `${f.retries} retried` : '',
      ].filter(Boolean);
      return [
        s,
        fmt(f.tps, 0),
        fmt(f.doneP50, 2),
        fmt(f.doneP99, 2),
        fmt(f.cpuMs, 4),
        fmt(f.perCore, 0),
        Number.isFinite(f.coreBusy) ? `${(f.coreBusy * 100).toFixed(0)} %` : '–',
        fmt(f.tasksPerRequest, 1),
        fmt(f.redisUs, 1),
        role('sync', f.syncMs),
        role('workers', f.agentsMs),
        role('caller', f.callerMs),
        ...(traced ? [fmt(f.gcCount, 0), fmt(f.gcPauseMs + f.gcMarkingMs, 1)] : []),
        notes.join(', '),
      ];
    });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The last line of `--modes router-only`: its figures as one JSON object. */
export interface RouterOnlyHeadline {
  router_tps: number;
  router_cpu_ms_per_task: number;
  /** 1000 ÷ router_cpu_ms_per_task. */
  router_tasks_per_core: number;
  /** The router's CPU time ÷ the flood's wall time. */
  router_core_busy: number;
  /** Tasks per submission request the router got. */
  router_tasks_per_request: number;
  floor_tps: number;
  floor_cpu_ms_per_task: number;
  floor_tasks_per_core: number;
  floor_tasks_per_request: number;
  /** Median over repetitions of router ÷ floor CPU per task, each repetition's pair. */
  router_vs_floor_cpu: number;
  /** Redis' CPU µs per task in the router's floods. */
  redis_cpu_us_per_task: number;
  /** `--trace-gc`: the router's collections per flood and their pauses (null when not traced). */
  router_gc_pauses: number;
  router_gc_pause_ms: number;
  router_gc_marking_ms: number;
}

/** The keys of {@link RouterOnlyHeadline}, in order. */
export const ROUTER_ONLY_HEADLINE_KEYS: readonly (keyof RouterOnlyHeadline)[] = [
  'router_tps',
  'router_cpu_ms_per_task',
  'router_tasks_per_core',
  'router_core_busy',
  'router_tasks_per_request',
  'floor_tps',
  'floor_cpu_ms_per_task',
  'floor_tasks_per_core',
  'floor_tasks_per_request',
  'router_vs_floor_cpu',
  'redis_cpu_us_per_task',
  'router_gc_pauses',
  'router_gc_pause_ms',
  'router_gc_marking_ms',
];

/** The headline figures of `--modes router-only`. */
export function routerOnlyHeadline(records: Records): RouterOnlyHeadline {
  const router = figures(records, 'router');
  const floor = figures(records, 'router-floor');
  return {
    router_tps: router.tps,
    router_cpu_ms_per_task: router.cpuMs,
    router_tasks_per_core: router.perCore,
    router_core_busy: router.coreBusy,
    router_tasks_per_request: router.tasksPerRequest,
    floor_tps: floor.tps,
    floor_cpu_ms_per_task: floor.cpuMs,
    floor_tasks_per_core: floor.perCore,
    floor_tasks_per_request: floor.tasksPerRequest,
    router_vs_floor_cpu: pairedRatio(records, 'router', 'router-floor', 'flood', frontMs),
    redis_cpu_us_per_task: router.redisUs,
    router_gc_pauses: router.gcCount,
    router_gc_pause_ms: router.gcPauseMs,
    router_gc_marking_ms: router.gcMarkingMs,
  };
}

/**
 * The JSON line: rounded figures in key order (a figure not measured, NaN, becomes null), and
 * whether the processes were pinned.
 */
export function routerOnlyHeadlineJson(h: RouterOnlyHeadline, pinned: boolean): string {
  const out: Record<string, number | boolean> = {};
  for (const k of ROUTER_ONLY_HEADLINE_KEYS) out[k] = round(h[k]);
  out['pinned'] = pinned;
  return JSON.stringify(out);
}

/** What the figures say, in a line or two. */
export function verdictLines(records: Records): string[] {
  const h = routerOnlyHeadline(records);
  const lines: string[] = [];
  if (Number.isFinite(h.router_cpu_ms_per_task))
    lines.push(
      `router: ${fmt(h.router_cpu_ms_per_task * 1000, 0)} µs CPU per task → ${fmt(h.router_tasks_per_core, 0)} tasks/s per router core (its core ${fmt(h.router_core_busy * 100, 0)} % busy in the floods)`,
    );
  if (Number.isFinite(h.floor_cpu_ms_per_task))
    lines.push(
      `floor (fastify, same body and schemas, one XADD per task): ${fmt(h.floor_cpu_ms_per_task * 1000, 0)} µs CPU per task → ${fmt(h.floor_tasks_per_core, 0)} tasks/s per core`,
    );
  if (Number.isFinite(h.router_vs_floor_cpu)) {
    const floorRuns = records['router-floor']?.flood ?? [];
    const extraUs = median(
      (records.router?.flood ?? []).map((r, i) => {
        const f = floorRuns[i];
        return f ? (frontMs(r) - frontMs(f)) * 1000 : NaN;
      }),
    );
    lines.push(
      `the router costs ${fmt(h.router_vs_floor_cpu, 2)}× the floor's CPU per task: ${fmt(extraUs, 0)} µs per task of routing, task state and results on top of parsing and one XADD`,
    );
  }
  return lines;
}
