import type { RedisClient } from '@agent-reach/service-kit/redis';
import { Coalescer, type ReachKeys } from '@agent-reach/protocol';
import { holdScript, type HoldItem, type HoldReply } from '../commands/hold.ts';

/** What a {@link HoldBatch} stores with. */
export interface HoldBatchOptions {
  /** A connection where hold-n.lua is loaded (`holdScript`). */
  redis: RedisClient;
  keys: Pick<ReachKeys, 'task' | 'timeline' | 'taskShardOf' | 'taskIndex'>;
}

/**
 * The holds of one tick (tasks stored `delayed` or `queued`, send/hold.ts), one hold-n.lua call
 * per task shard: a burst of submissions into a waiting room costs one script call per shard and
 * tick, not one per task, each still checked as if it came alone.
 */
export class HoldBatch {
  private readonly batches: Coalescer<HoldItem, HoldReply>;

  constructor(private readonly o: HoldBatchOptions) {
    this.batches = new Coalescer((shard, items) =>
      holdScript.run(o.redis, {
        keys: { index: o.keys.taskIndex(Number(shard)) },
        args: {},
        moreKeys: items.flatMap((item) => {
          const taskId = String(item.taskId);
          return [o.keys.task(taskId), o.keys.timeline(taskId)];
        }),
        items,
      }),
    );
  }

  /** Sends the holds gathered so far now (after their due entries, due-watch.ts). */
  flush(): void {
    this.batches.flush();
  }

  /** Stores one task in the tick's call for its shard (its payload weighs on the batch's size). */
  hold(item: HoldItem): Promise<HoldReply> {
    const taskId = String(item.taskId);
    return this.batches.call(
      String(this.o.keys.taskShardOf(taskId)),
      item,
      String(item.payload).length,
    );
  }
}
