/**
 * The chaos schedule: what breaks when, in seconds after traffic starts. Every step is started
 * at its time on its own, so a long step (a pause) does not delay the next.
 */

/** One disruption. */
export type ChaosStep =
  | { at: number; kind: 'kill-agent'; agent: number }
  | { at: number; kind: 'pause-agent'; agent: number; minMs: number }
  | { at: number; kind: 'kill-router' }
  | { at: number; kind: 'kill-redis'; downMs: number };

/**
 * An agent SIGKILLed (and restarted) every 4 s up to 49 s, rotating; agent 3 paused at 9 s, in
 * the middle of a task, for at least 3 s (past the 2 s offline bound) and until registry-sync has
 * taken its tasks back; router B killed at 18 s; Redis killed at 28 s with no agent kill in the
 * 5 s before, so recovery times measure one failure at a time.
 */
export const CHAOS_PLAN: readonly ChaosStep[] = [
  { at: 3, kind: 'kill-agent', agent: 0 },
  { at: 7, kind: 'kill-agent', agent: 1 },
  { at: 9, kind: 'pause-agent', agent: 3, minMs: 3000 },
  { at: 11, kind: 'kill-agent', agent: 2 },
  { at: 15, kind: 'kill-agent', agent: 0 },
  { at: 18, kind: 'kill-router' },
  { at: 19, kind: 'kill-agent', agent: 1 },
  { at: 23, kind: 'kill-agent', agent: 3 },
  { at: 28, kind: 'kill-redis', downMs: 1500 },
  { at: 33, kind: 'kill-agent', agent: 2 },
  { at: 37, kind: 'kill-agent', agent: 0 },
  { at: 41, kind: 'kill-agent', agent: 1 },
  { at: 45, kind: 'kill-agent', agent: 3 },
  { at: 49, kind: 'kill-agent', agent: 2 },
];

/** Runs `run(step)` for each step at its time after `startedAt`; rejects with the first failure. */
export async function runPlan(
  plan: readonly ChaosStep[],
  startedAt: number,
  run: (step: ChaosStep) => Promise<void>,
  cancelled: () => boolean,
): Promise<void> {
  await Promise.all(
    plan.map(async (step) => {
      const wait = startedAt + step.at * 1000 - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!cancelled()) await run(step);
    }),
  );
}
