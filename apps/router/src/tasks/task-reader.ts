import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeTaskRecord,
  MAX_LISTED_CHILDREN,
  taskFields,
  type ReachKeys,
  type SubmitReply,
  type TaskStatus,
  type TaskView,
} from '@agent-reach/protocol';
import {
  markSeenScript,
  parsePendingEntry,
  taskViewOf,
  type PendingEntry,
} from '@agent-reach/dispatch';
import { isWaitTopic } from '../callbacks/wait-topic.ts';
import type { ArchiveReader } from './archive-reader.ts';
import type { TenantScope } from './tenant-scope.ts';

/** What the submit reply of a repeated task_id reads of the task hash. */
const SUBMITTED = taskFields('status', 'agentId', 'stream', 'messageId', 'attempt', 'sentAt');

/** What a {@link TaskReader} reads with. */
export interface TaskReaderOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Reads tasks whose Redis state expired back from the archive; without it, none are. */
  archive?: ArchiveReader | undefined;
}

/** Reads tasks' state and timelines for the API. */
export class TaskReader {
  constructor(private readonly o: TaskReaderOptions) {}

  /**
   * The delivery of the task's current attempt that its agent holds, for a task whose first ack
   * has not reached it yet (`accepted`, no `sent_at`): its `sent` stage lives there until then.
   */
  private async delivery(
    taskId: string,
    status: TaskStatus | undefined,
    agentId: string | undefined,
    sentAt: number | undefined,
  ): Promise<PendingEntry | undefined> {
    if (status !== 'accepted' || !agentId || (sentAt ?? 0) > 0) return undefined;
    const value = await this.o.redis.hget(this.o.keys.pending(agentId), taskId);
    return value === null ? undefined : parsePendingEntry(taskId, value);
  }

  /**
   * The task (its scoped id) with its timeline in time order, or undefined when unknown or
   * expired; its ids as `scope`'s requester names them (the scoped ones without a scope), and
   * its payload when `opts.payload`.
   */
  async view(
    taskId: string,
    scope?: TenantScope,
    opts: { payload?: boolean } = {},
  ): Promise<TaskView | undefined> {
    const show = (id: string) => (scope ? scope.show(id) : id);
    // The task, its timeline and its children share the task's hash tag: one MULTI.
    const [[, hash], [, list], [, children]] = ((await this.o.redis
      .multi()
      .hgetall(this.o.keys.task(taskId))
      .lrange(this.o.keys.timeline(taskId), 0, -1)
      .smembers(this.o.keys.children(taskId))
      .exec()) ?? []) as [
      [unknown, Record<string, string>],
      [unknown, string[]],
      [unknown, string[] | undefined],
    ];
    const task = hash ? decodeTaskRecord(hash) : undefined;
    if (!task) return undefined;
    const pending = await this.delivery(taskId, task.status, task.agentId, task.sentAt);
    return taskViewOf(taskId, task, list ?? [], {
      show,
      pending,
      // A waited submission's topic is the router's own: nobody reads it through the API.
      hideTopic: isWaitTopic,
      children: await this.keptChildren(children ?? []),
      payload: opts.payload === true,
    });
  }

  /**
   * The task (its stored id) from the archive in InfluxDB once its Redis state expired, marked
   * `archived`; undefined when it is not archived, or no archive is read here.
   * @throws InfluxQueryError when InfluxDB fails or is unreachable.
   */
  async archived(taskId: string, scope: TenantScope): Promise<TaskView | undefined> {
    return this.o.archive?.view(taskId, scope);
  }

  /**
   * The children that exist, in id order, at most MAX_LISTED_CHILDREN: a submission refused
   * after its parent recorded it (NO_AGENT, say) or a child expired before its parent is left
   * out. One EXISTS per child, each in its own slot.
   */
  private async keptChildren(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const kept: string[] = [];
    const sorted = [...ids].sort();
    for (
      let i = 0;
      i < sorted.length && kept.length < MAX_LISTED_CHILDREN;
      i += MAX_LISTED_CHILDREN
    ) {
      const batch = sorted.slice(i, i + MAX_LISTED_CHILDREN);
      const taskKeys = batch.map((id) => this.o.keys.task(id));
      const found = await Promise.all(taskKeys.map((key) => this.o.redis.exists(key)));
      for (let j = 0; j < batch.length && kept.length < MAX_LISTED_CHILDREN; j++)
        if (found[j] === 1) kept.push(batch[j] as string);
    }
    return kept;
  }

  /** The submit reply for an existing task (a repeated task_id), or undefined. */
  async submitView(taskId: string): Promise<SubmitReply | undefined> {
    const task = SUBMITTED.decode(
      await this.o.redis.hmget(this.o.keys.task(taskId), ...SUBMITTED.fields),
    );
    const { status, agentId, stream, messageId } = task;
    if (!status) return undefined;
    const pending = await this.delivery(taskId, status, agentId, task.sentAt);
    const delivered = pending !== undefined && pending.attempt === task.attempt;
    // A claim still being sent: once this caller is told the task exists, the submission that
    // claimed it may not give it back (release-claim-2.lua). Gone meanwhile: it was given back,
    // and this submission makes the task anew.
    if (status === 'accepted' && !delivered && !(await this.markSeen(taskId))) return undefined;
    return {
      task_id: taskId,
      status: delivered ? 'sent' : status,
      agent_id: agentId ?? '',
      // A pooled task keeps its pool stream; a pushed one, once delivered, is in its agent's inbox.
      stream:
        stream ||
        (agentId && (delivered || status !== 'accepted') ? this.o.keys.inbox(agentId) : ''),
      message_id: delivered ? pending.messageId : (messageId ?? ''),
    };
  }

  private markSeen(taskId: string): Promise<boolean> {
    return markSeenScript.run(this.o.redis, { keys: { task: this.o.keys.task(taskId) }, args: {} });
  }
}
