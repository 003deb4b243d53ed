import type { RedisClient } from '@agent-reach/service-kit/redis';
import { Coalescer, type ReachKeys } from '@agent-reach/protocol';
import { assignScript, type AssignItem, type AssignReply } from '../commands/assign.ts';

/** What an {@link AssignBatch} assigns with. */
export interface AssignBatchOptions {
  /** A connection where assign-n.lua is loaded (`assignScript`). */
  redis: RedisClient;
  keys: Pick<ReachKeys, 'task' | 'timeline' | 'taskShardOf'>;
}

/**
 * The assignments of waiting tasks (retries, delayed tasks, tasks leaving a waiting room) made in
 * one tick, one assign-n.lua call per task shard: a drained room or a sweep's retries cost one
 * script call per shard and tick, not one per task, each assignment still checked as if alone.
 */
export class AssignBatch {
  private readonly batches: Coalescer<{ taskId: string; item: AssignItem }, AssignReply>;

  constructor(private readonly o: AssignBatchOptions) {
    this.batches = new Coalescer((_shard, calls) =>
      assignScript.run(o.redis, {
        keys: {},
        args: {},
        moreKeys: calls.flatMap((c) => [o.keys.task(c.taskId), o.keys.timeline(c.taskId)]),
        items: calls.map((c) => c.item),
      }),
    );
  }

  /** Assigns one waiting task in the tick's call for its shard. */
  assign(taskId: string, item: AssignItem): Promise<AssignReply> {
    return this.batches.call(String(this.o.keys.taskShardOf(taskId)), { taskId, item });
  }
}
