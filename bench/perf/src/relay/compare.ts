/**
 * `--modes relay`: the report of the SDK agent against a relay with an HTTP and one with an A2A
 * endpoint, the same no-op task three ways (docs/PERFORMANCE.md, Relay).
 */
import type { RunRecord } from '../measure.ts';
import type { RelaySystemName } from '../options.ts';
import type { Records } from '../session.ts';
import { median, round } from '../stats.ts';

/** The relay process may cost this much more CPU per task than the SDK agent process, ms. */
export const EXTRA_CPU_MS_TARGET = 0.15;
/** A relay may add this much to the paced run's submit → completed p50, ms. */
export const EXTRA_P50_MS_TARGET = 2;

const runs = (records: Records, system: RelaySystemName, kind: string): RunRecord[] =>
  records[system]?.[kind] ?? [];

/** The paced run's key (`paced200`): the first paced run of the records. */
export function pacedKey(records: Records): string {
  for (const bySystem of Object.values(records))
    for (const key of Object.keys(bySystem)) if (key.startsWith('paced')) return key;
  return 'paced';
}

/** Median over repetitions of `f(a) − f(b)`, a and b from the same repetition. */
export function pairedDiff(
  records: Records,
  a: RelaySystemName,
  b: RelaySystemName,
  kind: string,
  f: (r: RunRecord) => number,
): { median: number; reps: number[] } {
  const xs = runs(records, a, kind);
  const ys = runs(records, b, kind);
  const reps = xs.map((x, i) => (ys[i] ? f(x) - f(ys[i]) : NaN));
  return { median: median(reps), reps };
}

/** CPU ms per task of the process that runs the tasks: the agent, or the relay. */
const agentCpu = (r: RunRecord) => r.cpu.workers;
/** CPU ms per task of every process of the system but the endpoint server, Redis included. */
const systemCpu = (r: RunRecord) => r.cpu.total - r.cpu.endpoint;
const p50 = (r: RunRecord) => r.result.done.p50;

const COLUMNS = [
  'system',
  'flood tasks/s',
  'flood p50',
  'flood p99',
  'paced p50',
  'paced p99',
  'caller',
  'router',
  'sync',
  'agent/relay',
  'redis',
  'total',
  'endpoint',
  'notes',
] as const;

function fmt(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

/** The table: medians over repetitions; latencies in ms; CPU in ms per task from the floods. */
export function relayTable(records: Records, systems: readonly RelaySystemName[]): string {
  const paced = pacedKey(records);
  const rows = systems.map((s) => {
    const m = (kind: string, f: (r: RunRecord) => number) => median(runs(records, s, kind).map(f));
    const cpu = (role: keyof RunRecord['cpu']) =>
      fmt(
        m('flood', (r) => r.cpu[role]),
        3,
      );
    const retried = [...runs(records, s, 'flood'), ...runs(records, s, paced)].reduce(
      (n, r) => n + r.result.retries,
      0,
    );
    const lost = [...runs(records, s, 'flood'), ...runs(records, s, paced)].reduce(
      (n, r) => n + (r.result.submitted - r.result.completed),
      0,
    );
    return [
      s,
      fmt(
        m('flood', (r) => r.result.tps),
        0,
      ),
      fmt(m('flood', p50), 2),
      fmt(
        m('flood', (r) => r.result.done.p99),
        2,
      ),
      fmt(m(paced, p50), 2),
      fmt(
        m(paced, (r) => r.result.done.p99),
        2,
      ),
      cpu('caller'),
      cpu('front'),
      cpu('sync'),
      cpu('workers'),
      cpu('redis'),
      fmt(m('flood', systemCpu), 3),
      cpu('endpoint'),
      [retried ? `${retried} retried` : '', lost ? `${lost} without result` : '']
        .filter(Boolean)
        .join(', '),
    ];
  });
  const widths = COLUMNS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) =>
        i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(COLUMNS), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** What each relay adds to the SDK agent, against the targets; the JSON figures alongside. */
export function relayTargets(
  records: Records,
  systems: readonly RelaySystemName[],
): { lines: string[]; json: Record<string, number> } {
  const paced = pacedKey(records);
  const lines: string[] = [];
  const json: Record<string, number> = {};
  const reps = (xs: number[], digits: number) => xs.map((x) => fmt(x, digits)).join(', ');
  for (const s of systems) {
    const key = s.replace('-', '_');
    json[`${key}_tps`] = round(median(runs(records, s, 'flood').map((r) => r.result.tps)));
    json[`${key}_${paced}_p50_ms`] = round(median(runs(records, s, paced).map(p50)));
    json[`${key}_cpu_ms_per_task`] = round(median(runs(records, s, 'flood').map(systemCpu)));
    json[`${key}_agent_cpu_ms_per_task`] = round(median(runs(records, s, 'flood').map(agentCpu)));
    json[`${key}_endpoint_cpu_ms_per_task`] = round(
      median(runs(records, s, 'flood').map((r) => r.cpu.endpoint)),
    );
    if (s === 'reach' || !systems.includes('reach')) continue;
    const cpu = pairedDiff(records, s, 'reach', 'flood', agentCpu);
    const lat = pairedDiff(records, s, 'reach', paced, p50);
    const total = pairedDiff(records, s, 'reach', 'flood', systemCpu);
    json[`${key}_extra_cpu_ms_per_task`] = round(cpu.median);
    json[`${key}_extra_${paced}_p50_ms`] = round(lat.median);
    const met = (v: number, target: number) =>
      Number.isFinite(v) ? (v <= target ? 'met' : 'MISSED') : 'not measured';
    lines.push(
      `${s}: relay process ${fmt(cpu.median, 3)} CPU-ms per task more than the SDK agent process (repetitions ${reps(cpu.reps, 3)}; target ≤ ${EXTRA_CPU_MS_TARGET}): ${met(cpu.median, EXTRA_CPU_MS_TARGET)}`,
      `${s}: ${paced} p50 ${fmt(lat.median, 2)} ms more than the SDK agent (repetitions ${reps(lat.reps, 2)}; target ≤ ${EXTRA_P50_MS_TARGET}): ${met(lat.median, EXTRA_P50_MS_TARGET)}`,
      `${s}: every process but the endpoint server, Redis included: ${fmt(total.median, 3)} CPU-ms per task more than the SDK agent's system`,
    );
  }
  return { lines, json };
}
