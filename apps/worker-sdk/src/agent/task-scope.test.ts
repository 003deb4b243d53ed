import type { TaskMessage } from '@agent-reach/protocol';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { isTaskAbortedError, TaskAbortedError } from '../errors.ts';
import type { AckTarget, AckWriter } from './acks.ts';
import type { ChildResults, TaskSubmitter } from './submitter.ts';
import { HandlerContext, TaskScope } from './task-scope.ts';

const origin = { stream: 's', group: 'g', kind: 'inbox' as const };

const output = vi.fn(() => Promise.resolve());

function scopeOf(task: Partial<TaskMessage>, now = () => 1_000): TaskScope {
  const message: TaskMessage = {
    task_id: 't1',
    capability: 'echo',
    payload: '{}',
    attempt: 2,
    trace_id: 'tr',
    callback_topic: '',
    deadline_ms: 0,
    ...task,
  };
  const target: AckTarget = { taskId: 't1', attempt: 2, messageId: '1-0', origin };
  const shared = {
    acks: { output } as unknown as AckWriter,
    submitter: {} as TaskSubmitter & ChildResults,
    logger: pino({ level: 'silent' }),
    now,
  };
  return new TaskScope(shared, message, target, Promise.resolve());
}

describe('TaskScope', () => {
  it('makes no signal, logger or output until asked', () => {
    const scope = scopeOf({});
    expect(scope.usedOutput).toBeUndefined();
    expect(scope.abortReason()).toBeUndefined();
    const signal = scope.signal();
    expect(signal.aborted).toBe(false);
    expect(scope.signal()).toBe(signal);
    expect(scope.log()).toBe(scope.log());
  });

  it('aborts at the deadline once the signal is asked for, and never after the handler ended', () => {
    vi.useFakeTimers();
    try {
      let now = 1_000;
      const scope = scopeOf({ deadline_ms: 1_500 }, () => now);
      const signal = scope.signal();
      now = 1_500;
      vi.advanceTimersByTime(500);
      expect(signal.aborted).toBe(true);
      expect(isTaskAbortedError(signal.reason)).toBe(true);
      expect((signal.reason as TaskAbortedError).retryable).toBe(false);

      const ended = scopeOf({ deadline_ms: 1_500 }, () => 1_000);
      ended.end();
      const late = ended.signal();
      vi.advanceTimersByTime(1_000);
      expect(late.aborted).toBe(false);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells a passed deadline from its clock when nobody asked for the signal', () => {
    let now = 1_000;
    const scope = scopeOf({ deadline_ms: 1_500 }, () => now);
    expect(scope.abortReason()).toBeUndefined();
    now = 1_500;
    const reason = scope.abortReason();
    expect(reason).toBeInstanceOf(TaskAbortedError);
    expect((reason as TaskAbortedError).retryable).toBe(false);
  });

  it('a cancel aborts the signal whether or not it was asked for before; the first reason stays', () => {
    const early = scopeOf({});
    const signal = early.signal();
    early.abort('cancelled');
    early.abort('shutdown');
    expect(signal.aborted).toBe(true);
    expect(early.abortReason()).toBe(signal.reason);
    expect((signal.reason as Error).message).toMatch(/cancelled/);

    const late = scopeOf({});
    late.abort('shutdown');
    expect(late.signal().aborted).toBe(true);
    expect(late.abortReason()).toBeInstanceOf(TaskAbortedError);
  });
});

describe('HandlerContext', () => {
  it("carries the task's fields, and works destructured", async () => {
    const scope = scopeOf({ parent_task_id: 'p', hops: 3, deadline_ms: 9_000 });
    const ctx = new HandlerContext(scope, '7-0', { a: 1 });
    expect({
      taskId: ctx.taskId,
      capability: ctx.capability,
      payload: ctx.payload,
      attempt: ctx.attempt,
      traceId: ctx.traceId,
      parentTaskId: ctx.parentTaskId,
      hops: ctx.hops,
      deadlineMs: ctx.deadlineMs,
      messageId: ctx.messageId,
    }).toEqual({
      taskId: 't1',
      capability: 'echo',
      payload: { a: 1 },
      attempt: 2,
      traceId: 'tr',
      parentTaskId: 'p',
      hops: 3,
      deadlineMs: 9_000,
      messageId: '7-0',
    });
    const { signal, logger, progress, stream } = ctx;
    expect(signal).toBe(scope.signal());
    expect(logger).toBe(scope.log());
    progress(0.5);
    stream('chunk');
    expect(scope.usedOutput).toBeDefined();
    await scope.usedOutput?.close();
    expect(output).toHaveBeenCalledTimes(1);
  });
});
