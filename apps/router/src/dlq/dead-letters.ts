import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import { taskFields, type DlqItem, type ReachKeys, type ReplayReply } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import { replayScript } from '@agent-reach/dispatch';
import type { TenantScope } from '../tasks/tenant-scope.ts';

/**
 * How long after a replay's start its due entry would come due should the router stop before
 * the replay's end (it is made due at once when the replay is done).
 */
const REPLAY_GRACE_MS = 5000;

/** What a dead letter's listing reads of its task hash. */
const LISTED = taskFields('status', 'capability', 'deadReason', 'deadAt', 'attempt', 'error');

/** What a {@link DeadLetters} reads with. */
export interface DeadLettersOptions {
  redis: RedisClient;
  keys: ReachKeys;
}

/** Reading and replaying dead letters. */
export class DeadLetters {
  constructor(private readonly o: DeadLettersOptions) {}

  /**
   * Newest dead letters first that `scope`'s requester may see (its tenant's; every tenant's for
   * operators), optionally of one capability, named as the requester names tasks.
   */
  async list(
    scope: TenantScope,
    capability: string | undefined,
    limit: number,
  ): Promise<DlqItem[]> {
    const items: DlqItem[] = [];
    const gone: string[] = [];
    // Scan newest first in pages; a capability filter may need several pages.
    for (let offset = 0; items.length < limit && offset < 20_000; offset += 200) {
      const page = await this.o.redis.zrevrange(this.o.keys.dlq(), offset, offset + 199);
      if (page.length === 0) break;
      // One index for every tenant: another tenant's dead letters are skipped unread.
      const ids = page.filter((id) => scope.sees(id));
      const pipeline = slotPipeline(this.o.redis);
      for (const id of ids)
        pipeline.add(this.o.keys.task(id), (p) => p.hmget(this.o.keys.task(id), ...LISTED.fields));
      const rows = await pipeline.exec();
      ids.forEach((id, i) => {
        const task = LISTED.decode((rows[i]?.[1] ?? []) as (string | null)[]);
        if (task.status !== 'dead') {
          if (task.status === undefined) gone.push(id);
          return;
        }
        if (capability && task.capability !== capability) return;
        if (items.length >= limit) return;
        const { error } = task;
        items.push({
          task_id: scope.show(id),
          capability: task.capability ?? '',
          reason: task.deadReason ?? '',
          dead_at: task.deadAt ?? 0,
          attempts: task.attempt ?? 0,
          ...(error ? { error } : {}),
        });
      });
    }
    // Expired tasks leave the index lazily.
    if (gone.length > 0) await this.o.redis.zrem(this.o.keys.dlq(), ...gone);
    return items;
  }

  /**
   * Sends a dead task (its scoped id) again as a fresh attempt; registry-sync delivers it. The
   * reply names the scoped id.
   */
  async replay(taskId: string): Promise<ReplayReply> {
    // A replayed task without its due entry would never be sent, so one is written before it
    // turns `retry_wait` (not in one pipeline with it: on a Cluster the two would go to different
    // masters at once), due a little later: registry-sync drops an entry over a task still dead,
    // which it must not find before the replay (nor move a concurrent replay's entry: NX). Once
    // replayed, the entry is made due now.
    const due = this.o.keys.dueOf(taskId);
    await this.o.redis.zadd(due, 'NX', Date.now() + REPLAY_GRACE_MS, taskId);
    const reply = await replayScript.run(this.o.redis, {
      keys: { task: this.o.keys.task(taskId), timeline: this.o.keys.timeline(taskId) },
      args: {},
    });
    if (!reply.ok && reply.refusal === 'unknown_task')
      throw httpError('TASK_NOT_FOUND', `task ${taskId} is unknown or has expired`);
    if (!reply.ok)
      throw httpError(
        'NOT_DEAD',
        `task ${taskId} is not dead-lettered; only a dead task can be replayed`,
      );
    await this.o.redis.zadd(due, Date.now(), taskId);
    await this.o.redis.zrem(this.o.keys.dlq(), taskId);
    return { task_id: taskId, status: 'retry_wait', attempt: reply.attempt };
  }
}
