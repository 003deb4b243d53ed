import type { BenchOptions } from '../options.ts';

/** What `--modes fairness` runs; {@link compileFairnessSettings} derives it from the command line. */
export interface FairnessSettings {
  /** Agents of the fleet. @default 2 (`--workers`) */
  agents: number;
  /** max_concurrency of each agent. @default 8 (`--concurrency`) */
  slotsPerAgent: number;
  /** How long every task runs in its agent, ms (D). @default 200 */
  taskMs: number;
  /** Tenant B's steady rate, tasks/s. @default 10 (`--rates`) */
  bRatePerS: number;
  /** Tenant A's flood as a multiple of B's rate. @default 100 */
  floodFactor: number;
  /** Fairness keys A spreads its flood over. @default 1000 */
  floodKeys: number;
  /** Tenants of the Jain run, each flooding at A's rate ÷ this. @default 10 */
  jainTenants: number;
  /** Load before a measured window, ms. @default 5000 (quick: 2000) */
  warmupMs: number;
  /** The measured window of the B runs, ms. @default 20000 (quick: 6000) */
  windowMs: number;
  /** The measured window of the Jain run, ms. @default 15000 (quick: 5000) */
  jainWindowMs: number;
  /** How long, after a window, the load goes on while B's last tasks are awaited, ms. @default 5000 */
  graceMs: number;
  /**
   * Tenant A's backlog bound in the BullMQ run (its client adds no jobs while this many wait),
   * so that both systems hold A's flood to the same backlog: the room's default per-tenant bound.
   * @default 10000
   */
  bullmqBacklog: number;
  /** A submission tick, ms: every flood sends one batch per tick. @default 100 */
  tickMs: number;
}

/** The fixed settings, and those the bench's shared flags give. */
export function compileFairnessSettings(opts: BenchOptions): FairnessSettings {
  return {
    agents: opts.workers,
    slotsPerAgent: opts.concurrency,
    taskMs: 200,
    bRatePerS: opts.pacedRates[0] ?? 10,
    floodFactor: 100,
    floodKeys: 1000,
    jainTenants: 10,
    warmupMs: opts.quick ? 2000 : 5000,
    windowMs: opts.quick ? 6000 : 20_000,
    jainWindowMs: opts.quick ? 5000 : 15_000,
    graceMs: 5000,
    bullmqBacklog: 10_000,
    tickMs: 100,
  };
}

/** All slots of the fleet (S). */
export const slotsOf = (s: FairnessSettings): number => s.agents * s.slotsPerAgent;
