import { describe, expect, it } from 'vitest';
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk';
import { A2ARun } from './a2a-run.ts';

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
const message = (value: string) => ({
  messageId: 'm',
  contextId: 'c',
  taskId: 't',
  role: Role.ROLE_AGENT,
  parts: [text(value)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const task = (state: TaskState, said?: string, artifacts: Task['artifacts'] = []): Task => ({
  id: 'task-1',
  contextId: 'c',
  status: { state, message: said === undefined ? undefined : message(said), timestamp: undefined },
  artifacts,
  history: [],
  metadata: undefined,
});
const run = () => {
  const progress: unknown[] = [];
  const chunks: unknown[] = [];
  return {
    progress,
    chunks,
    run: new A2ARun({
      onProgress: (v) => void progress.push(v),
      onChunk: (v) => void chunks.push(v),
    }),
  };
};
const status = (state: TaskState, said?: string) => ({
  payload: {
    $case: 'statusUpdate' as const,
    value: {
      taskId: 'task-1',
      contextId: 'c',
      status: task(state, said).status,
      metadata: undefined,
    },
  },
});

describe('A2ARun', () => {
  it('follows a stream: the task id, progress, chunks, then the artifacts as result', () => {
    const r = run();
    expect(
      r.run.onEvent({ payload: { $case: 'task', value: task(TaskState.TASK_STATE_SUBMITTED) } }),
    ).toBeUndefined();
    expect(r.run.taskId).toBe('task-1');
    r.run.onEvent(status(TaskState.TASK_STATE_WORKING, 'busy'));
    const artifact = {
      artifactId: 'a',
      name: '',
      description: '',
      parts: [text('x')],
      metadata: undefined,
      extensions: [],
    };
    r.run.onEvent({
      payload: {
        $case: 'artifactUpdate',
        value: {
          taskId: 'task-1',
          contextId: 'c',
          artifact,
          append: false,
          lastChunk: true,
          metadata: undefined,
        },
      },
    });
    expect(r.progress).toEqual([{ state: 'working', message: 'busy' }]);
    expect(r.chunks).toEqual(['x']);
    expect(r.run.onEvent(status(TaskState.TASK_STATE_COMPLETED))).toEqual({
      kind: 'completed',
      result: { text: 'x' },
    });
  });

  it('takes a completed task’s status message when it has no artifacts, and a reply message', () => {
    expect(run().run.onTask(task(TaskState.TASK_STATE_COMPLETED, 'done'))).toEqual({
      kind: 'completed',
      result: { text: 'done' },
    });
    expect(run().run.onTask(task(TaskState.TASK_STATE_COMPLETED))).toEqual({
      kind: 'completed',
      result: null,
    });
    expect(run().run.onMessage(message('hi'))).toEqual({
      kind: 'completed',
      result: { text: 'hi' },
    });
  });

  it('maps failed (retryable), rejected (not), canceled and input-required', () => {
    expect(run().run.onTask(task(TaskState.TASK_STATE_FAILED, 'bad'))).toEqual({
      kind: 'failed',
      code: 'A2A_FAILED',
      error: 'bad',
      retryable: true,
    });
    expect(run().run.onTask(task(TaskState.TASK_STATE_REJECTED))).toMatchObject({
      code: 'A2A_FAILED',
      retryable: false,
    });
    expect(run().run.onTask(task(TaskState.TASK_STATE_CANCELED))).toMatchObject({
      code: 'CANCELLED',
      retryable: false,
    });
    const asking = run();
    expect(asking.run.onTask(task(TaskState.TASK_STATE_INPUT_REQUIRED, 'which?'))).toEqual({
      kind: 'failed',
      code: 'A2A_INPUT_REQUIRED',
      error: 'the A2A task stopped in state input_required: which?',
      retryable: false,
    });
    expect(asking.run.leftOpen).toBe(true);
  });

  it('goes on while a task runs', () => {
    expect(run().run.onTask(task(TaskState.TASK_STATE_WORKING))).toBeUndefined();
  });
});
