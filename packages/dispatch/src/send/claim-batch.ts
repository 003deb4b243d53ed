import type { RedisClient } from '@agent-reach/service-kit/redis';
import { Coalescer, type ReachKeys } from '@agent-reach/protocol';
import { claimScript, type ClaimItem, type ClaimReply } from '../commands/claim.ts';

/** What a {@link ClaimBatch} claims with. */
export interface ClaimBatchOptions {
  /** A connection where claim-n.lua is loaded (`claimScript`). */
  redis: RedisClient;
  keys: Pick<ReachKeys, 'task' | 'taskShardOf' | 'taskIndex'>;
}

/**
 * The submissions' claims of one tick, one claim-n.lua call per task shard: every key of a task
 * lives under its shard's hash tag (keys.ts `taskShardTag`), so the claims of one shard run as
 * one script call on one slot, each checked as if it ran alone.
 */
export class ClaimBatch {
  private readonly batches: Coalescer<ClaimItem, ClaimReply>;

  constructor(o: ClaimBatchOptions) {
    this.batches = new Coalescer((_shard, items) =>
      claimScript.run(o.redis, {
        // The shard of the keys below, as they are made now.
        keys: { index: o.keys.taskIndex(o.keys.taskShardOf(String(items[0]?.taskId))) },
        args: {},
        moreKeys: items.map((item) => o.keys.task(String(item.taskId))),
        items,
      }),
    );
    this.shardOf = (taskId) => String(o.keys.taskShardOf(taskId));
  }

  private readonly shardOf: (taskId: string) => string;

  /** Sends the claims gathered so far now (after their watchdog entries, due-watch.ts). */
  flush(): void {
    this.batches.flush();
  }

  /** Claims one submission's task_id in the tick's call for its shard. */
  claim(item: ClaimItem): Promise<ClaimReply> {
    const taskId = String(item.taskId);
    return this.batches.call(this.shardOf(taskId), item, String(item.payload).length);
  }
}
