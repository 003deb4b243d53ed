import {
  exponential,
  intBetween,
  lognormal,
  pareto,
  streamOf,
  uniform,
  type Random,
} from './prng.ts';

/** One simulated agent: how fast it works and how many tasks it runs at once. */
export interface SimAgentSpec {
  agent_id: string;
  /** Work done per unit of time; a task of `work_ms` takes `work_ms / speed` here. */
  speed: number;
  max_concurrency: number;
  /**
   * Tasks it runs at full speed; more than this share the agent (see SimAgent). Equal to
   * max_concurrency when slots are independent.
   */
  parallel_slots: number;
  /** Its health score (0–100) as the snapshot carries it; absent for 100. */
  health_score?: number;
}

/** One task of the workload. */
export interface SimTask {
  task_id: string;
  /** Submission time, simulated ms from the start. */
  arrive_ms: number;
  /** Execution time on an agent of speed 1. */
  work_ms: number;
}

/** Shape of the simulated fleet. */
export interface FleetOptions {
  /** @default 20 */
  agents: number;
  /** Slowest speed factor; speeds are log-uniform between the two bounds. @default 0.5 */
  minSpeed: number;
  /** @default 2 */
  maxSpeed: number;
  /** @default 4 */
  minConcurrency: number;
  /** @default 16 */
  maxConcurrency: number;
  /**
   * Share of an agent's max_concurrency slots that run without slowing each other down; the
   * rest share the agent's speed. 1 = independent slots (I/O-bound agents waiting on an LLM
   * API); lower = contended (a local model, a CPU-bound tool, a rate-limited key). @default 0.5
   */
  parallelShare: number;
}

/** Default fleet: 20 agents, speeds 0.5×–2×, max_concurrency 4–16, half the slots contended. */
export const DEFAULT_FLEET: FleetOptions = {
  agents: 20,
  minSpeed: 0.5,
  maxSpeed: 2,
  minConcurrency: 4,
  maxConcurrency: 16,
  parallelShare: 0.5,
};

/** One component of the duration mix. */
export type DurationComponent =
  | { kind: 'lognormal'; weight: number; medianMs: number; sigma: number }
  | { kind: 'pareto'; weight: number; minMs: number; alpha: number; capMs: number };

/**
 * Default task durations, milliseconds to minutes with a heavy tail: most tasks are short
 * tool calls, some take seconds, and one in ten is a long job whose length is Pareto
 * distributed (alpha 1.6: a few take many minutes). The long jobs carry most of the work.
 */
export const DEFAULT_DURATIONS: readonly DurationComponent[] = [
  { kind: 'lognormal', weight: 0.6, medianMs: 150, sigma: 1.0 },
  { kind: 'lognormal', weight: 0.3, medianMs: 4_000, sigma: 0.8 },
  { kind: 'pareto', weight: 0.1, minMs: 20_000, alpha: 1.6, capMs: 15 * 60_000 },
];

/** What to generate. */
export interface WorkloadOptions {
  seed: number;
  /** Number of tasks submitted. */
  tasks: number;
  /** Offered load as a share of the fleet's capacity, e.g. 0.9. */
  utilisation: number;
  fleet: readonly SimAgentSpec[];
  /** @default DEFAULT_DURATIONS */
  durations?: readonly DurationComponent[];
}

/** A generated workload. */
export interface Workload {
  tasks: SimTask[];
  fleet: readonly SimAgentSpec[];
  /** Mean of `work_ms` over the tasks generated. */
  meanWorkMs: number;
  /** Poisson arrival rate, tasks per simulated second. */
  arrivalsPerS: number;
}

/** Generates the fleet for a seed: the same seed gives the same agents. */
export function generateFleet(seed: number, options: FleetOptions = DEFAULT_FLEET): SimAgentSpec[] {
  const rng = streamOf(seed, 'fleet');
  const out: SimAgentSpec[] = [];
  const lo = Math.log(options.minSpeed);
  const hi = Math.log(options.maxSpeed);
  for (let i = 0; i < options.agents; i++) {
    const speed = Math.exp(uniform(rng, lo, hi));
    const max = intBetween(rng, options.minConcurrency, options.maxConcurrency);
    out.push({
      agent_id: `agent-${String(i).padStart(3, '0')}`,
      speed,
      max_concurrency: max,
      parallel_slots: Math.max(1, Math.min(max, Math.round(max * options.parallelShare))),
    });
  }
  return out;
}

/** Work per unit of time the fleet can do flat out (Σ parallel_slots × speed). */
export function fleetCapacity(fleet: readonly SimAgentSpec[]): number {
  return fleet.reduce((sum, a) => sum + a.parallel_slots * a.speed, 0);
}

/** Draws one task's work from the mix. */
export function drawWork(rng: Random, mix: readonly DurationComponent[]): number {
  const total = mix.reduce((s, c) => s + c.weight, 0);
  let pick = rng() * total;
  let chosen = mix[mix.length - 1];
  for (const c of mix) {
    pick -= c.weight;
    if (pick < 0) {
      chosen = c;
      break;
    }
  }
  if (!chosen) throw new RangeError('the duration mix is empty');
  // Every component uses two draws (Box–Muller takes two; Pareto one plus a spare), so one
  // task's component does not shift the numbers the next task sees.
  let ms: number;
  if (chosen.kind === 'lognormal') ms = lognormal(rng, chosen.medianMs, chosen.sigma);
  else {
    ms = Math.min(chosen.capMs, pareto(rng, chosen.minMs, chosen.alpha));
    rng();
  }
  return Math.max(1, ms);
}

/**
 * Generates the tasks: durations from the mix, then Poisson arrivals at the rate that offers
 * `utilisation` × capacity. Durations and arrivals come from separate streams, so the same seed
 * at 70 % and at 90 % gives the same tasks, only closer together.
 */
export function generateWorkload(options: WorkloadOptions): Workload {
  const mix = options.durations ?? DEFAULT_DURATIONS;
  const durations = streamOf(options.seed, 'durations');
  const work: number[] = [];
  for (let i = 0; i < options.tasks; i++) work.push(drawWork(durations, mix));
  const meanWorkMs = work.reduce((s, w) => s + w, 0) / Math.max(1, work.length);
  const ratePerMs = (options.utilisation * fleetCapacity(options.fleet)) / meanWorkMs;
  const arrivals = streamOf(options.seed, 'arrivals');
  const tasks: SimTask[] = [];
  let t = 0;
  for (let i = 0; i < options.tasks; i++) {
    t += exponential(arrivals, 1 / ratePerMs);
    tasks.push({ task_id: `task-${options.seed}-${i}`, arrive_ms: t, work_ms: work[i] as number });
  }
  return { tasks, fleet: options.fleet, meanWorkMs, arrivalsPerS: ratePerMs * 1000 };
}
