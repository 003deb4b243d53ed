import { FAILING_EVERY, FAILING_SCORE, type LabReport, type PolicyFigures } from './lab.ts';
import { fleetCapacity, generateFleet } from './workload.ts';

const COLUMNS = [
  'policy',
  'p50 s',
  'p95 s',
  'p99 s',
  'mean s',
  'via pool',
  'busy min',
  'busy max',
  'max/min',
  'stdev',
];

function pad(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
    .join('  ');
}

function row(f: PolicyFigures): string[] {
  const s = f.utilisationSpread;
  return [
    f.policy === 'least-load-exact' ? 'least-load-exact (ref)' : f.policy,
    f.p50S.toFixed(2),
    f.p95S.toFixed(1),
    f.p99S.toFixed(1),
    f.meanS.toFixed(2),
    `${(f.viaPoolShare * 100).toFixed(1)} %`,
    s.min.toFixed(3),
    s.max.toFixed(3),
    Number.isFinite(s.ratio) ? s.ratio.toFixed(2) : 'inf',
    s.stdev.toFixed(3),
  ];
}

/** The report as a readable table (one block per utilisation, then stickiness). */
export function formatReport(report: LabReport): string {
  const o = report.options;
  const fleet = generateFleet(o.seed, o.fleet);
  const lines: string[] = [
    `Agent-Reach routing lab · seed ${o.seed} · ${o.tasks} tasks per run · ${report.agents} agents ` +
      `(speed ${o.fleet.minSpeed}–${o.fleet.maxSpeed}×, max_concurrency ${o.fleet.minConcurrency}–${o.fleet.maxConcurrency}, ` +
      `${Math.round(o.fleet.parallelShare * 100)} % of slots at full speed, capacity ${fleetCapacity(fleet).toFixed(0)} slot·speed)`,
    `mean task work ${(report.meanWorkMs / 1000).toFixed(2)} s at speed 1 · snapshot every ${o.snapshotIntervalMs / 1000} s · ` +
      `${o.routers} router(s) · ${o.maxCandidates} candidates tried before the pool`,
    "completion = submit → done (queueing included), first 10 % of tasks left out; busy = share of an agent's work capacity in use",
    '',
  ];
  for (const u of o.utilisations) {
    const rows = report.figures.filter((f) => f.utilisation === u).map(row);
    const widths = COLUMNS.map((c, i) =>
      Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)),
    );
    const load = report.loads.find((l) => l.utilisation === u);
    const about = load
      ? ` · ${load.arrivalsPerS.toFixed(1)} tasks/s · ${(load.spanS / 3600).toFixed(2)} h simulated`
      : '';
    lines.push(
      `utilisation ${Math.round(u * 100)} %${about}`,
      pad(COLUMNS, widths),
      pad(
        widths.map((w) => '-'.repeat(w)),
        widths,
      ),
    );
    for (const r of rows) lines.push(pad(r, widths));
    lines.push('');
  }
  lines.push(
    `health: one agent in ${FAILING_EVERY} at health score ${FAILING_SCORE} (failing 5 % of its tasks), the same tasks`,
  );
  const hw = [20, 12, 16, 18, 12, 8];
  lines.push(
    pad(
      ['policy', 'utilisation', 'failing: tasks', 'failing: capacity', 'healthy max/min', 'p99 s'],
      hw,
    ),
  );
  for (const h of report.health) {
    lines.push(
      pad(
        [
          h.policy === 'project-no-health' ? 'project, no health' : h.policy,
          `${Math.round(h.utilisation * 100)} %`,
          `${(h.failingTaskShare * 100).toFixed(1)} %`,
          `${(h.failingCapacityShare * 100).toFixed(1)} %`,
          Number.isFinite(h.healthySpread.ratio) ? h.healthySpread.ratio.toFixed(2) : 'inf',
          h.p99S.toFixed(1),
        ],
        hw,
      ),
    );
  }
  lines.push('');
  lines.push(
    `stickiness: one agent added to N at equal load (${o.stickinessSamples} task_ids, rankCandidates)`,
  );
  const sw = [4, 8, 10, 12, 6];
  lines.push(pad(['N', 'kept', 'N/(N+1)', '0.97×ideal', 'pass'], sw));
  for (const s of report.stickiness) {
    lines.push(
      pad(
        [
          String(s.n),
          s.kept.toFixed(4),
          s.ideal.toFixed(4),
          s.target.toFixed(4),
          s.pass ? 'yes' : 'NO',
        ],
        sw,
      ),
    );
  }
  return lines.join('\n');
}

/** The key figures, for the last line of output (JSON). */
export function keyFigures(report: LabReport): Record<string, unknown> {
  const round = (x: number, d = 3) => Number(x.toFixed(d));
  return {
    seed: report.options.seed,
    tasks: report.options.tasks,
    agents: report.agents,
    runs: report.figures.map((f) => ({
      utilisation: f.utilisation,
      policy: f.policy,
      p50_s: round(f.p50S),
      p95_s: round(f.p95S),
      p99_s: round(f.p99S),
      via_pool: round(f.viaPoolShare, 4),
      busy_max_min: Number.isFinite(f.utilisationSpread.ratio)
        ? round(f.utilisationSpread.ratio)
        : null,
      busy_stdev: round(f.utilisationSpread.stdev, 4),
      within_max: f.withinMax,
    })),
    health: report.health.map((h) => ({
      utilisation: h.utilisation,
      policy: h.policy,
      failing_task_share: round(h.failingTaskShare, 4),
      failing_capacity_share: round(h.failingCapacityShare, 4),
    })),
    stickiness: report.stickiness.map((s) => ({
      n: s.n,
      kept: round(s.kept, 4),
      target: round(s.target, 4),
      pass: s.pass,
    })),
  };
}
