import type { Redis } from 'ioredis';
import type { ReachKeys, SubmitReply, TaskStatus, TaskView } from '@agent-reach/protocol';
import { parsePendingEntry, taskTimeline, type PendingEntry } from '@agent-reach/dispatch';
import { isWaitTopic } from '../callbacks/wait-topic.ts';
import type { TenantScope } from './tenant-scope.ts';

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads tasks' state and timelines for the API. */
export class TaskReader {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
  ) {}

  /**
   * The delivery of the task's current attempt that its agent holds, for a task whose first ack
   * has not reached it yet (`accepted`, no `sent_at`): its `sent` stage lives there until then.
   */
  private async delivery(
    taskId: string,
    status: string | null | undefined,
    agentId: string | null | undefined,
    sentAt: string | null | undefined,
  ): Promise<PendingEntry | undefined> {
    if (status !== 'accepted' || !agentId || Number(sentAt ?? 0) > 0) return undefined;
    const value = await this.redis.hget(this.keys.pending(agentId), taskId);
    return value === null ? undefined : parsePendingEntry(taskId, value);
  }

  /**
   * The task (its scoped id) with its timeline in time order, or undefined when unknown or
   * expired; its ids as `scope`'s requester names them (the scoped ones without a scope).
   */
  async view(taskId: string, scope?: TenantScope): Promise<TaskView | undefined> {
    const show = (id: string) => (scope ? scope.show(id) : id);
    const [[, hash], [, list]] = ((await this.redis
      .multi()
      .hgetall(this.keys.task(taskId))
      .lrange(this.keys.timeline(taskId), 0, -1)
      .exec()) ?? []) as [[unknown, Record<string, string>], [unknown, string[]]];
    if (!hash?.status) return undefined;
    const pending = await this.delivery(taskId, hash.status, hash.agent_id, hash.sent_at);
    const { status, timeline } = taskTimeline(hash, list ?? [], pending);
    const view: TaskView = {
      task_id: show(taskId),
      status,
      capability: hash.capability ?? '',
      agent_id: hash.agent_id ?? '',
      attempts: Number(hash.attempt ?? 0),
      created_at: Number(hash.created_at ?? 0),
      deadline_ms: Number(hash.deadline_ms ?? 0),
      timeline,
    };
    // A waited submission's topic is the router's own: nobody reads it through the API.
    if (hash.callback_topic && !isWaitTopic(hash.callback_topic))
      view.callback_topic = show(hash.callback_topic);
    if (hash.trace_id) view.trace_id = hash.trace_id;
    if (hash.result !== undefined) view.result = parseJson(hash.result);
    if (hash.error !== undefined) view.error = hash.error;
    if (hash.dead_reason) view.dead_reason = hash.dead_reason;
    if (hash.parent_task_id) view.parent_task_id = show(hash.parent_task_id);
    if (hash.hops) view.hops = Number(hash.hops);
    return view;
  }

  /** The submit reply for an existing task (a repeated task_id), or undefined. */
  async submitView(taskId: string): Promise<SubmitReply | undefined> {
    const [status, agentId, stream, messageId, attempt, sentAt] = await this.redis.hmget(
      this.keys.task(taskId),
      'status',
      'agent_id',
      'stream',
      'message_id',
      'attempt',
      'sent_at',
    );
    if (!status) return undefined;
    const pending = await this.delivery(taskId, status, agentId, sentAt);
    const delivered = pending !== undefined && pending.attempt === Number(attempt);
    return {
      task_id: taskId,
      status: delivered ? 'sent' : (status as TaskStatus),
      agent_id: agentId ?? '',
      // A pooled task keeps its pool stream; a pushed one, once delivered, is in its agent's inbox.
      stream:
        stream || (agentId && (delivered || status !== 'accepted') ? this.keys.inbox(agentId) : ''),
      message_id: delivered ? pending.messageId : (messageId ?? ''),
    };
  }
}
