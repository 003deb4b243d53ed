import type { Redis } from 'ioredis';
import type {
  ReachKeys,
  SubmitReply,
  TaskStatus,
  TaskView,
  TimelineEntry,
} from '@agent-reach/protocol';

// For stages written in the same millisecond: the order they happen in a task's life.
const STAGE_ORDER: Record<string, number> = {
  replayed: 0,
  accepted: 0,
  sent: 1,
  received: 2,
  completed: 3,
  failed: 3,
  retried: 4,
  dead: 5,
};

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

  /** The task with its timeline in time order, or undefined when unknown or expired. */
  async view(taskId: string): Promise<TaskView | undefined> {
    const [[, hash], [, list]] = ((await this.redis
      .multi()
      .hgetall(this.keys.task(taskId))
      .lrange(this.keys.timeline(taskId), 0, -1)
      .exec()) ?? []) as [[unknown, Record<string, string>], [unknown, string[]]];
    if (!hash?.status) return undefined;
    const timeline = (list ?? [])
      .map((line) => parseJson(line) as TimelineEntry)
      .filter((e) => e && typeof e.at === 'number')
      // Stages are written by different processes; order by time, then by lifecycle order.
      .sort((a, b) => a.at - b.at || (STAGE_ORDER[a.stage] ?? 9) - (STAGE_ORDER[b.stage] ?? 9));
    const view: TaskView = {
      task_id: taskId,
      status: hash.status as TaskStatus,
      capability: hash.capability ?? '',
      agent_id: hash.agent_id ?? '',
      attempts: Number(hash.attempt ?? 0),
      created_at: Number(hash.created_at ?? 0),
      deadline_ms: Number(hash.deadline_ms ?? 0),
      timeline,
    };
    if (hash.callback_topic) view.callback_topic = hash.callback_topic;
    if (hash.trace_id) view.trace_id = hash.trace_id;
    if (hash.result !== undefined) view.result = parseJson(hash.result);
    if (hash.error !== undefined) view.error = hash.error;
    if (hash.dead_reason) view.dead_reason = hash.dead_reason;
    if (hash.parent_task_id) view.parent_task_id = hash.parent_task_id;
    if (hash.hops) view.hops = Number(hash.hops);
    return view;
  }

  /** The submit reply for an existing task (a repeated task_id), or undefined. */
  async submitView(taskId: string): Promise<SubmitReply | undefined> {
    const [status, agentId, stream, messageId] = await this.redis.hmget(
      this.keys.task(taskId),
      'status',
      'agent_id',
      'stream',
      'message_id',
    );
    if (!status) return undefined;
    return {
      task_id: taskId,
      status: status as TaskStatus,
      agent_id: agentId ?? '',
      stream: stream ?? '',
      message_id: messageId ?? '',
    };
  }
}
