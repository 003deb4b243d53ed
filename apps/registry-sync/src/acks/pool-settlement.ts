import type { RedisClient } from '@agent-reach/service-kit/redis';
import { WORKER_GROUP, type AckMessage, type ReachKeys } from '@agent-reach/protocol';
import { poolStreamOf } from '@agent-reach/dispatch';
import { releaseScript } from '../commands/release.ts';
import { requeueScript } from '../commands/requeue.ts';
import type { AckOutcome } from './ack-outcome.ts';

/** What pool settlement works with. */
export interface PoolSettlementOptions {
  /** A connection where release-3.lua and requeue-1.lua are loaded. */
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * A pull agent's task lives in its capability's pool: a finished one leaves the pool, and a
 * receipt the task refused gives the slot back — another agent took it first, or this one may
 * not take it; then the entry goes back into the pool for an agent that may (a worker that
 * ignored the constraints may still acknowledge the old entry, which no longer matters).
 */
export class PoolSettlement {
  constructor(private readonly o: PoolSettlementOptions) {}

  /** Settles the pool entry of `ack` (which names a pool) after the task step's `outcome`. */
  async settle(ack: AckMessage, outcome: AckOutcome, poolEntry: string): Promise<void> {
    const { redis, keys } = this.o;
    const pool = ack.pool as string;
    if (
      !outcome.applied &&
      (outcome.reason === 'not_assigned' || outcome.reason === 'not_eligible')
    ) {
      await releaseScript.run(redis, {
        keys: {
          agent: keys.agent(ack.agent_id),
          pending: keys.pending(ack.agent_id),
          inbox: keys.inbox(ack.agent_id),
        },
        args: { taskId: ack.task_id, attempt: ack.attempt, group: WORKER_GROUP },
      });
      if (outcome.reason === 'not_eligible' && ack.message_id) {
        const stream = await poolStreamOf(redis, keys, pool, ack.task_id);
        await requeueScript.run(redis, {
          keys: { pool: stream },
          args: { group: WORKER_GROUP, entryId: ack.message_id },
        });
      }
      return;
    }
    // The entry is in the band of the task's priority (pool-bands.ts).
    if (poolEntry) await redis.xdel(await poolStreamOf(redis, keys, pool, ack.task_id), poolEntry);
  }
}
