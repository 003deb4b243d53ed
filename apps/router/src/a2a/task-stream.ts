import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { START_CURSOR, type TaskEventCursor } from '@agent-reach/protocol';
import type { TaskEvent, TaskEventsReader } from '../tasks/task-events.ts';
import type { TaskEventsFeed } from '../tasks/task-events-feed.ts';
import {
  agentMessage,
  dataPart,
  isTerminalState,
  OUTPUT_ARTIFACT_ID,
  textPart,
} from './task-mapping.ts';

/** What a task's A2A event stream reads from. */
export interface TaskStreamDeps {
  reader: TaskEventsReader;
  feed: TaskEventsFeed;
}

/** One task to follow: its scoped id, how the caller names it, and its final state read at the end. */
export interface FollowedTask {
  /** The id inside Redis. */
  id: string;
  /** The caller's name of the task (the A2A task id). */
  shownId: string;
  contextId: string;
  /** The task as it is now (read when the stream ends, for its result and error). */
  read: () => Promise<Task | undefined>;
  /** How the caller names ids (the task's own, in stage data). */
  show: (id: string) => string;
  /** Aborted when the caller went away. */
  signal: AbortSignal;
  /** Replay nothing of what happened before: the stream starts with the task's current state. */
  fromNow: boolean;
}

/** The A2A state a timeline stage moves a task to; undefined for stages that change no state. */
function stageState(stage: unknown): TaskState | undefined {
  switch (stage) {
    case 'accepted':
      return TaskState.TASK_STATE_SUBMITTED;
    case 'sent':
    case 'received':
    case 'streaming':
    case 'failed':
    case 'retried':
      return TaskState.TASK_STATE_WORKING;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'dead':
      return TaskState.TASK_STATE_FAILED;
    case 'cancelled':
      return TaskState.TASK_STATE_CANCELED;
    default:
      return undefined;
  }
}

/** How far along a non-final state is: submitted, then working. */
function rank(state: TaskState): number {
  return state === TaskState.TASK_STATE_SUBMITTED ? 0 : 1;
}

/**
 * A task's events (`GET /v1/tasks/:id/events`, read the same way) as A2A stream responses after
 * `initial` (the task event the stream starts with): a stage that changes the task's A2A state is
 * a status-update (a failed attempt's error as its message), a progress value a `working`
 * status-update whose message is a data part `{progress}`, an output chunk an artifact-update of
 * the artifact `output` (appended), a truncation a `working` status-update saying so. At the
 * final stage the task is read once more: its result artifact, then the final status-update, and
 * the stream ends.
 */
export async function* followTask(
  deps: TaskStreamDeps,
  task: FollowedTask,
  initial: Task,
): AsyncGenerator<StreamResponse, void, undefined> {
  yield { payload: { $case: 'task', value: initial } };
  if (initial.status && isTerminalState(initial.status.state)) return;
  const { id, shownId: taskId, contextId } = task;
  let state = initial.status?.state ?? TaskState.TASK_STATE_SUBMITTED;
  let chunks = 0;
  const status = (next: TaskState, parts?: ReturnType<typeof textPart>[]): StreamResponse => ({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId,
        contextId,
        status: {
          state: next,
          message: parts ? agentMessage(taskId, contextId, parts) : undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      },
    },
  });
  const map = (e: TaskEvent): StreamResponse | undefined => {
    switch (e.event) {
      case 'stage': {
        const next = stageState(e.data.stage);
        if (next === undefined || isTerminalState(next)) return undefined;
        const error = typeof e.data.error === 'string' ? e.data.error : undefined;
        // A stage replayed from before the stream's first event moves nothing back.
        const forward = rank(next) > rank(state);
        if (!forward && error === undefined) return undefined;
        if (forward) state = next;
        return status(next, error ? [textPart(`attempt failed: ${error}`)] : undefined);
      }
      case 'progress':
        return status(TaskState.TASK_STATE_WORKING, [dataPart({ progress: e.data.progress })]);
      case 'truncated':
        return status(TaskState.TASK_STATE_WORKING, [
          textPart('output truncated: later chunks were dropped'),
        ]);
      case 'chunk': {
        const append = chunks > 0;
        chunks += 1;
        return {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId,
              contextId,
              artifact: {
                artifactId: OUTPUT_ARTIFACT_ID,
                name: 'output',
                description: 'Output streamed by the agent while it ran',
                parts: [textPart(typeof e.data.chunk === 'string' ? e.data.chunk : '')],
                metadata: undefined,
                extensions: [],
              },
              append,
              lastChunk: false,
              metadata: undefined,
            },
          },
        };
      }
    }
  };
  let cursor: TaskEventCursor = START_CURSOR;
  let first = true;
  while (!task.signal.aborted && !deps.feed.closed) {
    const page = await deps.reader.read(id, cursor, task.show);
    if (page === undefined) return;
    for (const e of page.events) {
      // A subscriber joining late gets the task's state as it is (the first event), not its past.
      if (first && task.fromNow && e.event === 'stage') continue;
      const out = map(e);
      if (out) yield out;
    }
    first = false;
    cursor = page.cursor;
    if (page.done) break;
    if (!page.more) await deps.feed.waitForOutput(id, cursor.entryId);
  }
  if (task.signal.aborted || deps.feed.closed) return;
  const final = await task.read();
  if (!final) return;
  for (const artifact of final.artifacts)
    yield {
      payload: {
        $case: 'artifactUpdate',
        value: { taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined },
      },
    };
  yield {
    payload: {
      $case: 'statusUpdate',
      value: { taskId, contextId, status: final.status, metadata: final.metadata },
    },
  };
}
