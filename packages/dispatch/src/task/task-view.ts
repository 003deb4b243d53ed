import type { TaskRecord, TaskView } from '@agent-reach/protocol';
import type { PendingEntry } from './pending-entry.ts';
import { taskTimeline } from './timeline.ts';

/** How {@link taskViewOf} names ids and which parts it leaves out. */
export interface TaskViewOptions {
  /** The id a requester sees for a scoped id (a task's, a parent's, a topic's). */
  show: (scoped: string) => string;
  /** The delivery of an `accepted` task's current attempt, whose first ack has not landed yet. */
  pending?: PendingEntry | undefined;
  /** A callback topic nobody reads through the API (a router's wait topic): left out. */
  hideTopic?: (topic: string) => boolean;
  /** The children to list, as stored ids (the caller decides which are kept). */
  children?: readonly string[];
  /** Show the caller's payload (`?include=payload`); a cancelled task keeps none. */
  payload?: boolean;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A task's view as `GET /v1/tasks/:id` answers it, from its state hash and its timeline list:
 * what the router reads live and what the archive keeps once the task is final.
 */
export function taskViewOf(
  taskId: string,
  task: TaskRecord,
  timelineLines: readonly string[],
  o: TaskViewOptions,
): TaskView {
  const { show } = o;
  const { status, timeline } = taskTimeline(task, timelineLines, o.pending);
  const view: TaskView = {
    task_id: show(taskId),
    status,
    capability: task.capability ?? '',
    agent_id: task.agentId ?? '',
    attempts: task.attempt ?? 0,
    created_at: task.createdAt ?? 0,
    deadline_ms: task.deadlineMs ?? 0,
    timeline,
  };
  if (task.callbackTopic && !o.hideTopic?.(task.callbackTopic))
    view.callback_topic = show(task.callbackTopic);
  if (task.traceId) view.trace_id = task.traceId;
  if (task.result !== undefined) view.result = parseJson(task.result);
  if (task.error !== undefined) view.error = task.error;
  if (task.deadReason) view.dead_reason = task.deadReason;
  if (task.parentTaskId) view.parent_task_id = show(task.parentTaskId);
  if (task.hops) view.hops = task.hops;
  if (task.priority) view.priority = task.priority;
  if (task.fallbackCapabilities) view.fallback_capabilities = task.fallbackCapabilities;
  if (o.children && o.children.length > 0) view.children = o.children.map(show);
  if (o.payload && task.payload) view.payload = parseJson(task.payload);
  return view;
}
