import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  MAX_LISTED_CHILDREN,
  type ReachKeys,
  type SubmitReply,
  type TaskStatus,
  type TaskView,
} from '@agent-reach/protocol';
import {
  markSeenScript,
  parsePendingEntry,
  taskTimeline,
  type PendingEntry,
} from '@agent-reach/dispatch';
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
    private readonly redis: RedisClient,
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
    // The task, its timeline and its children share the task's hash tag: one MULTI.
    const [[, hash], [, list], [, children]] = ((await this.redis
      .multi()
      .hgetall(this.keys.task(taskId))
      .lrange(this.keys.timeline(taskId), 0, -1)
      .smembers(this.keys.children(taskId))
      .exec()) ?? []) as [
      [unknown, Record<string, string>],
      [unknown, string[]],
      [unknown, string[] | undefined],
    ];
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
    if (hash.priority) view.priority = Number(hash.priority);
    if (hash.fallback_capabilities) {
      const fallbacks = parseJson(hash.fallback_capabilities);
      if (Array.isArray(fallbacks))
        view.fallback_capabilities = fallbacks.filter((c): c is string => typeof c === 'string');
    }
    const kept = await this.keptChildren(children ?? []);
    if (kept.length > 0) view.children = kept.map(show);
    return view;
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
      const taskKeys = batch.map((id) => this.keys.task(id));
      const found = await Promise.all(taskKeys.map((key) => this.redis.exists(key)));
      for (let j = 0; j < batch.length && kept.length < MAX_LISTED_CHILDREN; j++)
        if (found[j] === 1) kept.push(batch[j] as string);
    }
    return kept;
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
    // A claim still being sent: once this caller is told the task exists, the submission that
    // claimed it may not give it back (release-claim-2.lua). Gone meanwhile: it was given back,
    // and this submission makes the task anew.
    if (status === 'accepted' && !delivered && !(await this.markSeen(taskId))) return undefined;
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

  private markSeen(taskId: string): Promise<boolean> {
    return markSeenScript.run(this.redis, { keys: { task: this.keys.task(taskId) }, args: {} });
  }
}
