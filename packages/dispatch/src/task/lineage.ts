import type { RedisClient } from '@agent-reach/service-kit/redis';
import { taskFields, type ReachKeys } from '@agent-reach/protocol';

/** Where a task submitted during another task's handling sits in its trace. */
export interface Lineage {
  /** Submissions deep: the parent's hops + 1. */
  hops: number;
  /** Agents that handled the task's ancestors. */
  agents: string[];
  /** Set by ranking: every candidate was already on the trace. */
  excluded?: boolean;
  /**
   * The parent's deadline, epoch ms on Redis time; 0 when it has none or is unknown. A child's
   * deadline is kept inside it (the router's submit path, `REACH_CHILD_MARGIN_MS`).
   */
  parentDeadlineMs: number;
}

/** What a child's lineage reads of its parent's task hash. */
const PARENT = taskFields('hops', 'traceAgents', 'agentId', 'deadlineMs');

/** How long a parent remembers its children (a cancel of the parent reaches them), seconds. */
const CHILDREN_TTL_S = 7 * 24 * 3600;

/**
 * Reads the parent's trace and deadline (one round trip, only for tasks that name a parent), and with
 * `childTaskId` records the child among the parent's children in the same round trip (a cancel
 * of the parent cancels them). An unknown parent (expired or never existed) starts a fresh trace
 * one hop deep.
 */
export async function traceOf(
  redis: RedisClient,
  keys: ReachKeys,
  parentTaskId: string,
  childTaskId?: string,
): Promise<Lineage> {
  const read = redis.pipeline().hmget(keys.task(parentTaskId), ...PARENT.fields);
  if (childTaskId !== undefined)
    read
      .sadd(keys.children(parentTaskId), childTaskId)
      .expire(keys.children(parentTaskId), CHILDREN_TTL_S);
  const replies = (await read.exec()) ?? [];
  const [err, fields] = replies[0] ?? [new Error('lineage: empty reply')];
  if (err) throw err;
  const parent = PARENT.decode(fields as (string | null)[]);
  const ancestors = [...(parent.traceAgents ?? [])];
  if (parent.agentId && !ancestors.includes(parent.agentId)) ancestors.push(parent.agentId);
  return {
    hops: (parent.hops ?? 0) + 1,
    agents: ancestors,
    parentDeadlineMs: parent.deadlineMs || 0,
  };
}
