import type { RedisClient } from '@agent-reach/service-kit/redis';
import { FOLLOW_UP_AFTER_MS, followUpMember, type ReachKeys } from '@agent-reach/protocol';

/** A follow-up entry written before a final state: `undo` drops it when the change did not happen. */
export interface FollowUpEntry {
  /** Drops the entry, if this writer wrote it (not an earlier writer's, still pending). */
  undo(): Promise<void>;
}

/**
 * Writes `taskId`'s follow-up entry (`followUpMember`, due FOLLOW_UP_AFTER_MS later) before a
 * cancel or a death is written, unless one is there already. The follow-up itself drops it once
 * done; should its writer stop first, registry-sync finds it due and does the follow-up.
 */
export async function writeFollowUp(
  redis: RedisClient,
  keys: ReachKeys,
  taskId: string,
): Promise<FollowUpEntry> {
  const due = keys.dueOf(taskId);
  const member = followUpMember(taskId);
  const added = (await redis.zadd(due, 'NX', Date.now() + FOLLOW_UP_AFTER_MS, member)) === 1;
  return {
    undo: async () => {
      if (added) await redis.zrem(due, member);
    },
  };
}
