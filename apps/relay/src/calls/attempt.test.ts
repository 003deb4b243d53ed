import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Attempt, untilAborted } from './attempt.ts';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

const request = (deadlineMs = 0) => {
  const controller = new AbortController();
  return { controller, req: { signal: controller.signal, deadlineMs } };
};

describe('Attempt', () => {
  it('stops on a cancel (not retryable) and on shutdown (retryable)', () => {
    const a = request();
    const cancelled = new Attempt(a.req, 1000);
    a.controller.abort('cancelled');
    expect(cancelled.signal.aborted).toBe(true);
    expect(cancelled.outcome()).toMatchObject({ code: 'CANCELLED', retryable: false });

    const b = request();
    b.controller.abort('shutdown');
    const shut = new Attempt(b.req, 1000);
    expect(shut.stopReason).toBe('shutdown');
    expect(shut.outcome()).toMatchObject({ code: 'RELAY_SHUTDOWN', retryable: true });
  });

  it('stops at the timeout or the deadline, whichever comes first', () => {
    const now = Date.now();
    const timed = new Attempt(request(now + 5000).req, 1000, now);
    vi.advanceTimersByTime(999);
    expect(timed.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(timed.outcome()).toMatchObject({ code: 'ENDPOINT_TIMEOUT', retryable: true });

    const late = new Attempt(request(now + 500).req, 1000, now);
    vi.advanceTimersByTime(500);
    expect(late.outcome()).toMatchObject({ code: 'DEADLINE_EXCEEDED', retryable: false });
    expect(new Attempt(request(now - 1).req, 1000, now).stopReason).toBe('deadline');
  });

  it('has no timer of its own without a timeout or deadline, and forgets the request on dispose', () => {
    const { controller, req } = request();
    const open = new Attempt(req, undefined);
    vi.advanceTimersByTime(3_600_000);
    expect(open.signal.aborted).toBe(false);
    open.dispose();
    controller.abort('cancelled');
    expect(open.signal.aborted).toBe(false);
  });
});

describe('untilAborted', () => {
  it('passes the value through, or rejects once the signal aborts', async () => {
    await expect(untilAborted(Promise.resolve(1), new AbortController().signal)).resolves.toBe(1);
    const controller = new AbortController();
    const pending = untilAborted(new Promise(() => undefined), controller.signal);
    controller.abort();
    await expect(pending).rejects.toThrow('aborted');
  });
});
