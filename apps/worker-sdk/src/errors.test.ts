import { describe, expect, it } from 'vitest';
import {
  NonRetryableError,
  ReachError,
  ReachConnectionError,
  ReachHttpError,
  SubmitFailedError,
  TaskAbortedError,
  TaskFailedError,
  errorText,
  failureCodeOf,
  isNonRetryableError,
  isReachError,
  isReachHttpError,
  isRetryable,
  isSubmitFailedError,
  isTaskFailedError,
} from './errors.ts';

describe('errors', () => {
  it('ReachHttpError takes the stable code from the body, or HTTP_<status>', () => {
    const e = new ReachHttpError('POST http://x/v1/tasks', 503, {
      error: 'NO_AGENT',
      message: 'none',
    });
    expect(e).toMatchObject({ name: 'ReachHttpError', code: 'NO_AGENT', status: 503 });
    expect(isReachHttpError(e) && isReachError(e)).toBe(true);
    expect(e).toBeInstanceOf(ReachError);
    expect(new ReachHttpError('GET x', 502, '<html>').code).toBe('HTTP_502');
  });

  it('SubmitFailedError names the task_id and the last try, answered or not', () => {
    const http = new ReachHttpError('POST http://x/v1/tasks', 503, {
      error: 'STORE_UNAVAILABLE',
      message: 'down',
      task_id: 't-1',
    });
    const answered = new SubmitFailedError('t-1', 3, http);
    expect(answered).toMatchObject({
      name: 'SubmitFailedError',
      taskId: 't-1',
      attempts: 3,
      code: 'STORE_UNAVAILABLE',
      status: 503,
      lastError: http,
      cause: http,
    });
    expect(answered.message).toContain('t-1');
    expect(isSubmitFailedError(answered) && isReachError(answered)).toBe(true);
    const unanswered = new SubmitFailedError('t-2', 1, new ReachConnectionError('POST x', true, 1));
    expect(unanswered).toMatchObject({ taskId: 't-2', code: undefined, status: undefined });
  });

  it('isRetryable: false for NonRetryableError and anything with retryable === false', () => {
    expect(isRetryable(new Error('x'))).toBe(true);
    expect(isRetryable('text')).toBe(true);
    expect(isRetryable(new NonRetryableError('bad input'))).toBe(false);
    expect(isRetryable(Object.assign(new Error('x'), { retryable: false }))).toBe(false);
    expect(isRetryable(new TaskAbortedError('t', 'deadline'))).toBe(false);
    expect(isRetryable(new TaskAbortedError('t', 'shutdown'))).toBe(true);
    expect(isNonRetryableError(new NonRetryableError('x', { cause: 1 }))).toBe(true);
  });

  it('TaskFailedError carries the item', () => {
    const item = {
      id: '1-0',
      task_id: 't1',
      status: 'dead' as const,
      capability: 'c',
      agent_id: 'a',
      attempt: 4,
      error: 'max_attempts',
      completed_at: 1,
    };
    const e = new TaskFailedError(item);
    expect(e).toMatchObject({ taskId: 't1', status: 'dead', error: 'max_attempts', item });
    expect(isTaskFailedError(e)).toBe(true);
    expect(isTaskFailedError(new Error('x'))).toBe(false);
  });

  it('errorText never throws', () => {
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect(errorText(new Error('boom'))).toBe('boom');
    expect(errorText('plain')).toBe('plain');
    expect(errorText({ a: 1 })).toBe('{"a":1}');
    expect(errorText(circular)).toBe('[object Object]');
    expect(errorText(undefined)).toBe('undefined');
  });
});

describe('failureCodeOf', () => {
  it("takes the thrown value's code when it is one, DEADLINE_EXCEEDED for a deadline, HANDLER_ERROR otherwise", () => {
    expect(failureCodeOf(new NonRetryableError('bad', { code: 'BAD_INPUT' }))).toBe('BAD_INPUT');
    expect(failureCodeOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(
      'ECONNREFUSED',
    );
    expect(failureCodeOf(new TaskAbortedError('t', 'deadline'))).toBe('DEADLINE_EXCEEDED');
    expect(failureCodeOf(Object.assign(new Error('x'), { code: 'not a code' }))).toBe(
      'HANDLER_ERROR',
    );
    expect(failureCodeOf('text')).toBe('HANDLER_ERROR');
    expect(failureCodeOf(new Error('plain'))).toBe('HANDLER_ERROR');
  });
});
