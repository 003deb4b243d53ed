import type { Redis } from 'ioredis';
import {
  decodeTaskOutput,
  decodeTaskRecord,
  FINAL_TASK_STATUSES,
  formatEventCursor,
  type ReachKeys,
  type TaskEventCursor,
  type TaskOutputEntry,
  type TaskStatus,
  type TimelineEntry,
} from '@agent-reach/protocol';
import { taskTimeline } from '@agent-reach/dispatch';

/** One server-sent event of a task: its type, its `id:` (a cursor) and its JSON data. */
export interface TaskEvent {
  event: 'stage' | 'progress' | 'chunk' | 'truncated';
  id: string;
  data: Record<string, unknown>;
}

/** What one read found: the events after the cursor, the cursor after them, and whether the task is over. */
export interface TaskEventsPage {
  events: TaskEvent[];
  cursor: TaskEventCursor;
  /** The task is final and every event up to its end was read: the stream may end. */
  done: boolean;
  /** A full page of output was read: more may follow at once. */
  more: boolean;
}

/** Most events-stream entries read at once; a longer backlog is read page by page. */
export const EVENTS_PAGE = 1000;

type Multi = [
  [unknown, Record<string, string>],
  [unknown, string[]],
  [unknown, [string, string[]][]],
];

/** A stage of the timeline as an event's data; its ids shown as the follower names them. */
function stageData(e: TimelineEntry, show: (id: string) => string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...e };
  if (typeof out.task_id === 'string') out.task_id = show(out.task_id);
  return out;
}

function outputData(e: TaskOutputEntry): Record<string, unknown> {
  const base = { at: e.at, attempt: e.attempt };
  if (e.kind === 'chunk') return { ...base, chunk: e.data };
  let value: unknown = null;
  try {
    value = JSON.parse(e.data);
  } catch {
    // Written by registry-sync from a checked ack: unreachable.
  }
  return e.kind === 'progress'
    ? { ...base, progress: value }
    : { ...base, ...(value as Record<string, unknown>) };
}

/**
 * Time of an event for the merge. The task's final stage sorts after everything: nothing of the
 * task comes after it, whatever the times other processes wrote.
 */
function orderKey(e: { at: number; final: boolean; output: boolean }): number {
  return e.final ? Number.POSITIVE_INFINITY : e.at * 2 + (e.output ? 1 : 0);
}

/**
 * The task's stages in the order a follower gets them: time order, but the final stage of a
 * final task last. The cursor counts the stages sent, so a stage may only ever be added after
 * those: the final stage always comes last, while a stage written with a later time (by another
 * process, or in the same millisecond) would otherwise sort after it and take its place.
 */
function followOrder(timeline: TimelineEntry[], status: TaskStatus): TimelineEntry[] {
  if (!FINAL_TASK_STATUSES.includes(status)) return timeline;
  for (let i = timeline.length - 1; i >= 0; i--) {
    if (timeline[i]?.stage !== status) continue;
    return [...timeline.slice(0, i), ...timeline.slice(i + 1), timeline[i] as TimelineEntry];
  }
  return timeline;
}

/** What a {@link TaskEventsReader} reads with. */
export interface TaskEventsReaderOptions {
  redis: Pick<Redis, 'multi'>;
  keys: ReachKeys;
}

/**
 * Reads a task's events for `GET /v1/tasks/:id/events`: its stages (from the task hash and
 * timeline, as `GET /v1/tasks/:id` shows them) merged in time order with its progress values
 * and output chunks (its events stream), after a cursor. One MULTI on the task's hash tag.
 */
export class TaskEventsReader {
  constructor(private readonly o: TaskEventsReaderOptions) {}

  /** The events after `cursor`, or undefined when the task is unknown or expired. */
  async read(
    taskId: string,
    cursor: TaskEventCursor,
    show: (id: string) => string,
  ): Promise<TaskEventsPage | undefined> {
    const [[, hash], [, lines], [, entries]] = ((await this.o.redis
      .multi()
      .hgetall(this.o.keys.task(taskId))
      .lrange(this.o.keys.timeline(taskId), 0, -1)
      .xrange(this.o.keys.taskEvents(taskId), `(${cursor.entryId}`, '+', 'COUNT', EVENTS_PAGE)
      .exec()) ?? []) as Multi;
    const task = hash ? decodeTaskRecord(hash) : undefined;
    if (!task) return undefined;
    // The `sent` stage of an attempt whose first ack has not come yet is shown once it has.
    const { status, timeline } = taskTimeline(task, lines ?? []);
    const final = FINAL_TASK_STATUSES.includes(status);
    type Merged = { at: number; final: boolean; output: boolean; event: TaskEvent['event'] } & (
      { stage: TimelineEntry } | { entry: TaskOutputEntry }
    );
    const merged: Merged[] = [];
    // The first `cursor.stages` stages were sent: stages only ever come after them (time order,
    // the accepted stage first, the final stage last), while their times may move, so they are
    // counted, not timed.
    const stages = followOrder(timeline, status);
    // The task's end (a `dead` before a replay is not).
    const end = final ? stages[stages.length - 1] : undefined;
    for (const stage of stages.slice(cursor.stages))
      merged.push({ at: stage.at, final: stage === end, output: false, event: 'stage', stage });
    const page = (entries ?? []).map(([id, fields]) => decodeTaskOutput(id, fields));
    // A full page: more output waits, and the stages after it are sent with it.
    const more = page.length === EVENTS_PAGE;
    // Output keeps its stream order: a time that went back (another attempt's agent) counts as the one before.
    let outputAt = 0;
    for (const entry of page) {
      outputAt = Math.max(outputAt, entry.at);
      merged.push({ at: outputAt, final: false, output: true, event: entry.kind, entry });
    }
    merged.sort((a, b) => orderKey(a) - orderKey(b));
    const events: TaskEvent[] = [];
    const next = { ...cursor };
    for (const m of merged) {
      if (more && !m.output && (m.final || m.at > outputAt)) break;
      if ('stage' in m) {
        next.stages += 1;
        events.push({
          event: 'stage',
          id: formatEventCursor(next),
          data: stageData(m.stage, show),
        });
      } else {
        next.entryId = m.entry.id;
        events.push({ event: m.event, id: formatEventCursor(next), data: outputData(m.entry) });
      }
    }
    return { events, cursor: next, done: final && !more, more };
  }
}
