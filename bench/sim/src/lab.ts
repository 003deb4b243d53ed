import { simulate, type RunResult } from './engine.ts';
import { mean, percentiles, spreadOf, type Spread } from './metrics.ts';
import { HEALTH_POLICY_NAMES, POLICY_NAMES, type PolicyName } from './policies.ts';
import { measureStickiness, type StickinessFigure } from './stickiness.ts';
import {
  DEFAULT_FLEET,
  fleetCapacity,
  generateFleet,
  generateWorkload,
  type FleetOptions,
  type SimAgentSpec,
  type Workload,
} from './workload.ts';

/** Settings of a lab run. */
export interface LabOptions {
  /** @default 42 */
  seed: number;
  /** Tasks per (utilisation, policy) run. @default 100000 */
  tasks: number;
  /** Offered loads, shares of fleet capacity. @default [0.7, 0.9] */
  utilisations: readonly number[];
  /** @default DEFAULT_FLEET */
  fleet: FleetOptions;
  /** @default all of POLICY_NAMES */
  policies: readonly PolicyName[];
  /** @default 1 */
  routers: number;
  /** @default 3, the router's default */
  maxCandidates: number;
  /** @default 5000 */
  snapshotIntervalMs: number;
  /** Fleet sizes N for the stickiness figure. @default [5, 10, 50] */
  stickinessNs: readonly number[];
  /** task_ids sampled for the stickiness figure. @default 50000 */
  stickinessSamples: number;
}

/** Defaults of the full run. */
export const DEFAULT_LAB: LabOptions = {
  seed: 42,
  tasks: 100_000,
  utilisations: [0.7, 0.9],
  fleet: DEFAULT_FLEET,
  policies: POLICY_NAMES,
  routers: 1,
  maxCandidates: 3,
  snapshotIntervalMs: 5000,
  stickinessNs: [5, 10, 50],
  stickinessSamples: 50_000,
};

/** The `--quick` run: the same shape, fewer tasks. */
export const QUICK_LAB: LabOptions = { ...DEFAULT_LAB, tasks: 8_000, stickinessSamples: 10_000 };

/** Figures of one policy at one utilisation. */
export interface PolicyFigures {
  utilisation: number;
  policy: PolicyName;
  /** Submit → done, seconds. */
  p50S: number;
  p95S: number;
  p99S: number;
  meanS: number;
  /** Share of tasks whose top candidates were all full. */
  viaPoolShare: number;
  /** Spread of the busy-time share (slot-time used / capacity) over agents. */
  utilisationSpread: Spread;
  /** Mean busy-time share over agents. */
  meanBusyShare: number;
  /** True when no agent ever ran more than its max_concurrency. */
  withinMax: boolean;
}

/** The health lab: one agent in four fails 5 % of its tasks (health score 95). */
export const FAILING_EVERY = 4;
export const FAILING_SCORE = 95;

/** Figures of one policy at one utilisation on the fleet with failing agents. */
export interface HealthFigures {
  utilisation: number;
  policy: PolicyName;
  /** Share of the tasks the failing agents started. */
  failingTaskShare: number;
  /** Their share of the fleet's capacity: what they would take if health did not count. */
  failingCapacityShare: number;
  /** The healthy agents' busy-time spread: are they still shared out evenly? */
  healthySpread: Spread;
  p99S: number;
}

/** Everything a lab run measured. */
export interface LabReport {
  options: LabOptions;
  agents: number;
  meanWorkMs: number;
  /** Per utilisation: the Poisson rate and how much simulated time the arrivals span. */
  loads: { utilisation: number; arrivalsPerS: number; spanS: number }[];
  figures: PolicyFigures[];
  health: HealthFigures[];
  stickiness: StickinessFigure[];
}

/** Summarises one run. */
export function figuresOf(utilisation: number, run: RunResult): PolicyFigures {
  const [p50, p95, p99] = percentiles(run.completionMs, [50, 95, 99]) as [number, number, number];
  return {
    utilisation,
    policy: run.policy,
    p50S: p50 / 1000,
    p95S: p95 / 1000,
    p99S: p99 / 1000,
    meanS: mean(run.completionMs) / 1000,
    viaPoolShare: run.viaPool / Math.max(1, run.completed),
    utilisationSpread: spreadOf(run.busyShare),
    meanBusyShare: mean(run.busyShare),
    withinMax: run.peakInflight.every((p, i) => p <= (run.maxConcurrency[i] ?? 0)),
  };
}

/** The lab's tasks at one utilisation of `fleet` (the same seed, so the same tasks). */
function workloadAt(options: LabOptions, utilisation: number, fleet: readonly SimAgentSpec[]) {
  return generateWorkload({ seed: options.seed, tasks: options.tasks, utilisation, fleet });
}

/** One policy over a workload, with the lab's router settings. */
function runPolicy(options: LabOptions, workload: Workload, policy: PolicyName) {
  return simulate(workload, {
    policy,
    seed: options.seed,
    routers: options.routers,
    maxCandidates: options.maxCandidates,
    snapshotIntervalMs: options.snapshotIntervalMs,
  });
}

/**
 * Runs every policy at every utilisation on the same fleet and the same tasks (same seed), then
 * measures stickiness. Deterministic: the same options give the same report.
 */
export async function runLab(options: LabOptions = DEFAULT_LAB): Promise<LabReport> {
  const fleet = generateFleet(options.seed, options.fleet);
  const figures: PolicyFigures[] = [];
  const loads: LabReport['loads'] = [];
  let meanWorkMs = 0;
  for (const utilisation of options.utilisations) {
    const workload = workloadAt(options, utilisation, fleet);
    meanWorkMs = workload.meanWorkMs;
    const spanS = (workload.tasks[workload.tasks.length - 1]?.arrive_ms ?? 0) / 1000;
    loads.push({ utilisation, arrivalsPerS: workload.arrivalsPerS, spanS });
    for (const policy of options.policies) {
      const run = await runPolicy(options, workload, policy);
      figures.push(figuresOf(utilisation, run));
    }
  }
  const health = await runHealthLab(options, fleet);
  const taskIds = Array.from(
    { length: options.stickinessSamples },
    (_, i) => `task-${options.seed}-${i}`,
  );
  const stickiness = options.stickinessNs.map((n) => measureStickiness(n, taskIds));
  return { options, agents: fleet.length, meanWorkMs, loads, figures, health, stickiness };
}

/**
 * The same fleet and tasks with one agent in four at a health score of 95, routed by the
 * project's policy and by the same with no health penalty (docs/ROUTING.md, Health in the score).
 */
async function runHealthLab(
  options: LabOptions,
  fleet: readonly SimAgentSpec[],
): Promise<HealthFigures[]> {
  const graded = fleet.map((a, i) =>
    i % FAILING_EVERY === 0 ? { ...a, health_score: FAILING_SCORE } : a,
  );
  const failing = graded.map((a) => a.health_score !== undefined);
  const capacityShare =
    fleetCapacity(graded.filter((_, i) => failing[i])) / Math.max(1e-9, fleetCapacity(graded));
  const out: HealthFigures[] = [];
  for (const utilisation of options.utilisations) {
    const workload = workloadAt(options, utilisation, graded);
    for (const policy of HEALTH_POLICY_NAMES) {
      const run = await runPolicy(options, workload, policy);
      const all = run.started.reduce((s, n) => s + n, 0);
      const theirs = run.started.reduce((s, n, i) => s + (failing[i] ? n : 0), 0);
      const [p99] = percentiles(run.completionMs, [99]) as [number];
      out.push({
        utilisation,
        policy,
        failingTaskShare: theirs / Math.max(1, all),
        failingCapacityShare: capacityShare,
        healthySpread: spreadOf(run.busyShare.filter((_, i) => !failing[i])),
        p99S: p99 / 1000,
      });
    }
  }
  return out;
}
