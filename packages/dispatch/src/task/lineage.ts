import type { Redis } from 'ioredis';
import type { ReachKeys } from '@agent-reach/protocol';

/** Where a task submitted during another task's handling sits in its trace. */
export interface Lineage {
  /** Submissions deep: the parent's hops + 1. */
  hops: number;
  /** Agents that handled the task's ancestors. */
  agents: string[];
  /** Set by ranking: every candidate was already on the trace. */
  excluded?: boolean;
}

/**
 * Reads the parent's trace (one round trip, only for tasks that name a parent). An unknown
 * parent (expired or never existed) starts a fresh trace one hop deep.
 */
export async function traceOf(
  redis: Redis,
  keys: ReachKeys,
  parentTaskId: string,
): Promise<Lineage> {
  const [hops, agents, agentId] = await redis.hmget(
    keys.task(parentTaskId),
    'hops',
    'trace_agents',
    'agent_id',
  );
  let ancestors: string[] = [];
  try {
    const parsed: unknown = JSON.parse(agents ?? '[]');
    if (Array.isArray(parsed)) ancestors = parsed.filter((a): a is string => typeof a === 'string');
  } catch {
    ancestors = [];
  }
  if (agentId && !ancestors.includes(agentId)) ancestors.push(agentId);
  return { hops: Number(hops ?? 0) + 1, agents: ancestors };
}
