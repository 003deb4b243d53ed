import type { SnapshotAgent } from '@agent-reach/protocol';
import type { HashRing } from './hash-ring.ts';

/** A candidate with the load it was ranked by. */
export interface RankedAgent {
  agent: SnapshotAgent;
  /** inflight / max_concurrency, from the freshest count the router has. */
  load: number;
}

/** Loads the router learned after the snapshot was written (from its own deliveries). */
export type LiveInflight = (agent: SnapshotAgent) => number;

const LOAD_EPSILON = 1e-9;

/**
 * Ranks the agents serving a capability for one task. Only live agents qualify: HEALTHY ones,
 * or SUSPECT ones when no HEALTHY agent exists; an agent ejected as a slow outlier does not. The lowest load ratio wins; agents of equal load
 * are ordered by the consistent-hash ring from the task_id's point.
 */
export function rankCandidates(
  agents: readonly SnapshotAgent[],
  taskId: string,
  ring: HashRing,
  inflightOf: LiveInflight = (a) => a.inflight,
): RankedAgent[] {
  const now = Date.now();
  const routable = agents.filter((a) => !(a.ejected_until && a.ejected_until > now));
  let live = routable.filter((a) => a.status === 'HEALTHY');
  if (live.length === 0) live = routable.filter((a) => a.status === 'SUSPECT');
  if (live.length === 0) return [];
  const ranked = live
    .map((agent) => ({ agent, load: inflightOf(agent) / Math.max(1, agent.max_concurrency) }))
    .sort((a, b) => a.load - b.load);
  const out: RankedAgent[] = [];
  for (let i = 0; i < ranked.length; ) {
    let j = i + 1;
    while (j < ranked.length && (ranked[j] as RankedAgent).load - (ranked[i] as RankedAgent).load < LOAD_EPSILON) j++;
    const tie = ranked.slice(i, j);
    if (tie.length === 1) out.push(tie[0] as RankedAgent);
    else {
      const byId = new Map(tie.map((r) => [r.agent.agent_id, r]));
      for (const id of ring.order(taskId, new Set(byId.keys()))) out.push(byId.get(id) as RankedAgent);
    }
    i = j;
  }
  return out;
}
