import type { Redis } from 'ioredis';
import type { ReachKeys } from '@agent-reach/protocol';
import {
  decide,
  isPull,
  isPush,
  type Candidate,
  type Decision,
  type SnapshotHolder,
} from '@agent-reach/dispatch';
import { traceOf, type Lineage } from './lineage.ts';

/** What a submission or a route query asks of the router's choice. */
export interface RoutingAsk {
  taskId: string;
  capability: string;
  tags?: readonly string[];
  region?: string;
  regionPolicy?: 'strict' | 'prefer';
  sessionId?: string;
  parentTaskId?: string;
}

/** The decision with what it was made from. */
export interface Routed {
  decision: Decision;
  lineage?: Lineage;
  /** The best push candidates (at most `picks`), best first. */
  push: Candidate[];
  /** The best pull candidates (at most `picks`), best first; ordered on first read. */
  readonly pull: Candidate[];
  /** How many push candidates there are in all. */
  pushCount: number;
}

/**
 * Builds the routing decision for a task from the snapshot held in memory: the parent's trace
 * (one read, only for tasks submitted during another's handling) and the session's agent (one
 * read, only with a session_id) are the only Redis reads.
 */
export async function route(
  redis: Redis,
  keys: ReachKeys,
  snapshot: SnapshotHolder,
  ask: RoutingAsk,
  watermark: number,
  reserve = false,
  picks = Infinity,
): Promise<Routed> {
  const [lineage, sessionAgent] = await Promise.all([
    ask.parentTaskId ? traceOf(redis, keys, ask.parentTaskId) : undefined,
    ask.sessionId ? redis.get(keys.session(ask.sessionId)) : undefined,
  ]);
  const decision = decide(
    snapshot.agentsFor(ask.capability),
    {
      taskId: ask.taskId,
      capability: ask.capability,
      ...(ask.tags ? { tags: ask.tags } : {}),
      ...(ask.region ? { region: ask.region, regionPolicy: ask.regionPolicy ?? 'prefer' } : {}),
      ...(sessionAgent ? { sessionAgent } : {}),
      ...(lineage && lineage.agents.length > 0 ? { exclude: new Set(lineage.agents) } : {}),
    },
    snapshot.ringFor(ask.capability),
    snapshot.inflightOf,
    { watermark, slowFactor: 1.5, slowPenalty: 0.25, maxBias: 0.05 },
  );
  // Only the few candidates a submission tries are ordered (ties walk the ring only that far).
  const push = decision.best(picks, isPush);
  // Count the choice at once, in the same tick as the decision, so the next request of a burst
  // already sees it (the delivery's reply settles it).
  if (reserve && push[0]) snapshot.reserve(push[0].agent.agent_id);
  let pull: Candidate[] | undefined;
  return {
    decision,
    ...(lineage ? { lineage } : {}),
    push,
    // Ordered only when read: a submission looks at pull agents only when no push agent took it.
    get pull() {
      return (pull ??= decision.best(picks, isPull));
    },
    pushCount: decision.count(isPush),
  };
}

/** True when some agent would serve but every one is full or on the task's trace. */
export function onlyExcludedFor(decision: Decision, reasons: readonly string[]): boolean {
  if (decision.count() > 0) return false;
  const live = decision.all.filter(
    (c) =>
      ![
        'offline',
        'starting',
        'draining',
        'ejected',
        'missing_tags',
        'region',
        'observing',
      ].includes(c.excluded ?? ''),
  );
  return live.length > 0 && live.every((c) => reasons.includes(c.excluded ?? ''));
}
