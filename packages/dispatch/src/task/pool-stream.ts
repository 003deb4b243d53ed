import {
  decodeTaskField,
  poolBandOf,
  TaskRecordField,
  type ReachKeys,
} from '@agent-reach/protocol';

/**
 * The stream of pool `poolId` a task's pool entry is in: the band of the task's priority
 * (pool-bands.ts), read from the task hash, where it never changes. An ack names the pool, not
 * the band, so that a raw worker reports a pool entry the way it always did.
 */
export async function poolStreamOf(
  redis: { hget(key: string, field: string): Promise<string | null> },
  keys: ReachKeys,
  poolId: string,
  taskId: string,
): Promise<string> {
  const stored = await redis.hget(keys.task(taskId), TaskRecordField.priority);
  const priority = decodeTaskField('priority', stored) || 0;
  return keys.poolBand(poolId, poolBandOf(priority));
}
