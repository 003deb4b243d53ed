import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import { isPush, type Decision } from '../routing/policy.ts';
import type { SnapshotHolder } from './snapshot-holder.ts';
import { slotsScript } from './slots.ts';

/** How many of the agents counted full {@link recountFree} reads at most. */
const RECOUNT_LIMIT = 8;

/** The free slots of the agents a recount read. */
export interface FreeSlots {
  /** By the counts held once Redis' are recorded: the deliveries chosen and not yet answered take slots. */
  free: number;
  /** By Redis' counts alone: the slots those deliveries will take are counted free. */
  inRedis: number;
}

/**
 * Reads the true inflight count (the slots its deliveries take, slots-2.lua) of the push agents the decision
 * excluded as full, the least loaded first, and records them in the snapshot holder; returns
 * how many free slots they have in all (callers use it through CapacityWaiter.room). Neither the
 * router nor registry-sync sees completions as they happen: a count learned from one's own
 * deliveries stays as high as it was for up to 250 ms, and
 * a snapshot's count is as old as the snapshot, so every agent can look full while tasks have
 * finished meanwhile. The router checks before it refuses a submission, registry-sync before a
 * retry waits another sweep.
 */
export async function recountFree(
  redis: RedisClient,
  keys: ReachKeys,
  snapshot: SnapshotHolder,
  decision: Decision,
): Promise<FreeSlots> {
  const full = decision.all
    .filter((c) => c.excluded === 'full' && isPush(c.agent))
    .sort((a, b) => a.load - b.load)
    .slice(0, RECOUNT_LIMIT);
  if (full.length === 0) return { free: 0, inRedis: 0 };
  const counts = await Promise.all(
    full.map(async ({ agent: { agent_id: id } }) =>
      slotsScript.run(redis, {
        keys: { pending: keys.pending(id), inbox: keys.inbox(id) },
        args: {},
      }),
    ),
  );
  let free = 0;
  let inRedis = 0;
  full.forEach((c, i) => {
    const inflight = counts[i] as number;
    snapshot.noteInflight(c.agent.agent_id, inflight);
    free += Math.max(0, c.agent.max_concurrency - snapshot.inflightOf(c.agent));
    inRedis += Math.max(0, c.agent.max_concurrency - inflight);
  });
  return { free, inRedis };
}
