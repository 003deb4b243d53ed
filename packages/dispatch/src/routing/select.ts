import type { SnapshotAgent } from '@agent-reach/protocol';
import type { HashRing } from './hash-ring.ts';
import { decide, type LiveInflight } from './policy.ts';

export type { LiveInflight } from './policy.ts';

/** A candidate with the load it was ranked by. */
export interface RankedAgent {
  agent: SnapshotAgent;
  /** inflight / max_concurrency, from the freshest count the router has. */
  load: number;
  /** The policy's score (lower is better). */
  score: number;
}

/**
 * The candidates for a task with no constraints beyond its capability, best first: the routing
 * policy of `decide()` (policy.ts) with its defaults. Kept as the simple entry point the policy
 * lab and the retry path use.
 */
export function rankCandidates(
  agents: readonly SnapshotAgent[],
  taskId: string,
  ring: HashRing,
  inflightOf: LiveInflight = (a) => a.inflight,
  capability = '',
): RankedAgent[] {
  return decide(agents, { taskId, capability }, ring, inflightOf).ranked;
}
