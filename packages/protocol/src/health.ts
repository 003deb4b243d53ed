/**
 * An agent's health from its outcomes: registry-sync keeps the latest outcomes of each agent in
 * its record (`outcomes`, one letter per outcome, newest last) and derives from them the health
 * score the API shows and the error rate that turns an agent DEGRADED (docs/ROUTING.md).
 */

/** One outcome as its letter in an agent's `outcomes` field. */
export const HealthOutcome = {
  /** A task completed in time. */
  completed: 'o',
  /** A task completed slower than the capability's slow bound. */
  slow: 's',
  /** A task failed (the worker reported it). */
  failed: 'f',
  /** A task's execution lease lapsed while the agent held it. */
  leaseLapse: 'l',
  /** A delivered task was not received in time. */
  receiptTimeout: 't',
  /** A probe passed (the SDK's `health()` said yes). */
  probeOk: 'P',
  /** A probe failed: `health()` said no, threw or timed out. */
  probeFailed: 'p',
} as const;
export type HealthOutcomeName = keyof typeof HealthOutcome;
export type HealthOutcomeLetter = (typeof HealthOutcome)[HealthOutcomeName];

/** How much each outcome takes off the score (0 = good). */
const WEIGHT: Record<string, number> = {
  o: 0,
  s: 0.5,
  f: 1,
  l: 1,
  t: 1,
  P: 0,
  p: 1,
};

/** Task outcomes (not probes): what the error rate is over. */
const TASK_OUTCOMES = new Set(['o', 's', 'f', 'l', 't']);
/** Task outcomes that count as errors for the error rate. */
const TASK_ERRORS = new Set(['f', 'l', 't']);

/**
 * Task outcomes (probes aside) an agent's health window must hold before its score steers
 * routing (the snapshot carries it only then, docs/ROUTING.md), as many as DEGRADED needs by
 * default: the first failure of a new agent is one in a handful, not a rate, and an agent
 * routed away from too early is never judged DEGRADED.
 */
export const HEALTH_ROUTING_MIN_OUTCOMES = 20;

/**
 * The health score, 0–100: 100 × (1 − the weighted share of bad outcomes), a slow completion
 * counting half. 100 for an agent with no outcomes yet.
 */
export function healthScore(outcomes: string): number {
  if (outcomes.length === 0) return 100;
  let bad = 0;
  let n = 0;
  for (const c of outcomes) {
    const w = WEIGHT[c];
    if (w === undefined) continue;
    bad += w;
    n++;
  }
  return n === 0 ? 100 : Math.round(100 * (1 - bad / n));
}

/** Event-loop delay p99 an agent may show before its score pays for it, ms (half the storm alert's). */
export const LOOP_LAG_FREE_MS = 250;
/** Share of time in garbage collection an agent may show before its score pays for it. */
export const GC_SHARE_FREE = 0.1;
/** The most points each runtime figure takes off the score. */
export const RUNTIME_PENALTY_CAP = 20;

/**
 * Points the runtime figures of an agent's last heartbeat take off its health score (docs/
 * ROUTING.md, Health in the score): one per 50 ms of event-loop delay p99 over 250 ms, and one per
 * percentage point of time in garbage collection over 10 %, each at most 20. A stalling loop or
 * a GC storm is seen before its tasks fail or time out.
 */
export function runtimePenalty(
  runtime: { loop_lag_p99_ms: number; gc_share?: number } | undefined,
): number {
  if (!runtime) return 0;
  const lag = Math.max(0, runtime.loop_lag_p99_ms - LOOP_LAG_FREE_MS) / 50;
  const gc = Math.max(0, (runtime.gc_share ?? 0) - GC_SHARE_FREE) * 100;
  return Math.round(Math.min(RUNTIME_PENALTY_CAP, lag) + Math.min(RUNTIME_PENALTY_CAP, gc));
}

/** Task outcomes in the window and how many of them were errors (failures, lapses, timeouts). */
export function taskErrorRate(outcomes: string): { tasks: number; errors: number; rate: number } {
  let tasks = 0;
  let errors = 0;
  for (const c of outcomes) {
    if (!TASK_OUTCOMES.has(c)) continue;
    tasks++;
    if (TASK_ERRORS.has(c)) errors++;
  }
  return { tasks, errors, rate: tasks === 0 ? 0 : errors / tasks };
}

/**
 * Passed probes since the last bad outcome, newest first: what a DEGRADED agent's recovery
 * counts (task completions in between neither count nor break the run).
 */
export function probeSuccessRun(outcomes: string): number {
  let run = 0;
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const c = outcomes[i] as string;
    if (c === 'P') run++;
    else if ((WEIGHT[c] ?? 0) >= 1) break;
  }
  return run;
}
