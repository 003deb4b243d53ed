import { HashRing, rankCandidates } from '@agent-reach/dispatch';
import type { SnapshotAgent } from '@agent-reach/protocol';
import { toSnapshotAgent } from './router-view.ts';

/** Picks the agent a task goes to. */
export type Chooser = (taskId: string) => string | undefined;

/** Share of `taskIds` that `before` and `after` send to the same agent. */
export function keptShare(taskIds: readonly string[], before: Chooser, after: Chooser): number {
  if (taskIds.length === 0) return NaN;
  let kept = 0;
  for (const t of taskIds) if (before(t) === after(t)) kept++;
  return kept / taskIds.length;
}

/** What adding one agent to N did. */
export interface StickinessFigure {
  n: number;
  /** Share of task_ids that kept their agent. */
  kept: number;
  /** The ideal, N / (N + 1): only the new agent's fair share moves. */
  ideal: number;
  /** The bar: 0.97 × N / (N + 1). */
  target: number;
  pass: boolean;
}

/** N agents of equal capacity and equal load, as a snapshot lists them. */
export function equalAgents(n: number): SnapshotAgent[] {
  const out: SnapshotAgent[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      toSnapshotAgent(
        {
          agent_id: `agent-${String(i).padStart(3, '0')}`,
          speed: 1,
          max_concurrency: 8,
          parallel_slots: 8,
        },
        2,
      ),
    );
  }
  return out;
}

/** The project's first choice for a task, at the loads the snapshot holds. */
export function projectChooser(agents: readonly SnapshotAgent[]): Chooser {
  const ring = new HashRing(agents.map((a) => a.agent_id));
  return (taskId) => rankCandidates(agents, taskId, ring)[0]?.agent.agent_id;
}

/**
 * Stickiness of the project's policy when one agent joins N at equal load: the share of
 * `taskIds` whose first choice from rankCandidates is the same before and after.
 */
export function measureStickiness(n: number, taskIds: readonly string[]): StickinessFigure {
  const before = projectChooser(equalAgents(n));
  const after = projectChooser(equalAgents(n + 1));
  const kept = keptShare(taskIds, before, after);
  const ideal = n / (n + 1);
  const target = 0.97 * ideal;
  return { n, kept, ideal, target, pass: kept >= target };
}
