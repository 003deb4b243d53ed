import { describe, expect, it } from 'vitest';
import { TaskState, type Part } from '@a2a-js/sdk';
import { TASK_STATUSES } from '@agent-reach/protocol';
import {
  a2aState,
  dataPart,
  isTerminalState,
  PartsError,
  payloadOf,
  taskOf,
  textPart,
} from './task-mapping.ts';

const url = (value: string): Part => ({
  content: { $case: 'url', value },
  metadata: undefined,
  filename: 'a.png',
  mediaType: 'image/png',
});

describe('payloadOf', () => {
  it('takes one data part as it is, and text parts as {text}', () => {
    expect(payloadOf([dataPart({ hello: 'world' })])).toEqual({ hello: 'world' });
    expect(payloadOf([dataPart([1, 2])])).toEqual([1, 2]);
    expect(payloadOf([textPart('a'), textPart('b')])).toEqual({ text: 'a\nb' });
  });

  it('wraps anything else as {parts}', () => {
    expect(payloadOf([textPart('look'), url('https://x/a.png'), dataPart(1)])).toEqual({
      parts: [
        { text: 'look' },
        { url: 'https://x/a.png', media_type: 'image/png', filename: 'a.png' },
        { data: 1 },
      ],
    });
  });

  it('refuses a message without parts', () => {
    expect(() => payloadOf([])).toThrow(PartsError);
  });
});

describe('states', () => {
  it('maps every Agent-Reach status, final ones to terminal states only', () => {
    for (const status of TASK_STATUSES) {
      const final = status === 'completed' || status === 'dead' || status === 'cancelled';
      expect(isTerminalState(a2aState(status)), status).toBe(final);
    }
    expect(a2aState('failed')).toBe(TaskState.TASK_STATE_WORKING);
    expect(a2aState('dead')).toBe(TaskState.TASK_STATE_FAILED);
  });
});

describe('taskOf', () => {
  const view = {
    task_id: 't-1',
    capability: 'echo',
    agent_id: 'a-1',
    attempts: 1,
    created_at: 1000,
    deadline_ms: 0,
    timeline: [{ stage: 'accepted' as const, at: 1000 }],
  };

  it('a completed task carries its result as the artifact "result"', () => {
    const task = taskOf({ ...view, status: 'completed', result: 'done' }, 'ctx');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.contextId).toBe('ctx');
    expect(task.artifacts[0]?.artifactId).toBe('result');
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'done' });
  });

  it('a dead task says why in its status message', () => {
    const task = taskOf(
      { ...view, status: 'dead', dead_reason: 'max_attempts', error: 'boom' },
      't-1',
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.artifacts).toEqual([]);
    expect(task.status?.message?.parts[0]?.content).toEqual({
      $case: 'text',
      value: 'dead-lettered (max_attempts): boom',
    });
  });
});
