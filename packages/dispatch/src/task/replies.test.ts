import { describe, expect, it } from 'vitest';
import { decodeCancelReply } from './cancel.ts';
import { decodeReplayReply } from './replay.ts';
import { decodeRetryReply } from './retry.ts';

describe('the task state machine scripts decode their replies', () => {
  it('cancel: what the task held, whether it was cancelled now, or why nothing was', () => {
    const held = ['sent', 'a1', 2, 3, 'topic', 'echo', '1-1', 'inbox', 0, 'trace', 1000, 'key-1'];
    expect(decodeCancelReply([0, ...held])).toEqual({
      ok: true,
      now: true,
      before: 'sent',
      agentId: 'a1',
      attempt: 2,
      epoch: 3,
      topic: 'topic',
      capability: 'echo',
      messageId: '1-1',
      stream: 'inbox',
      receivedAt: 0,
      traceId: 'trace',
      cancelledAt: 1000,
      cancelledBy: 'key-1',
    });
    expect(decodeCancelReply([1, ...held])).toMatchObject({ ok: true, now: false });
    expect(decodeCancelReply([-1])).toEqual({ ok: false, refusal: 'unknown_task' });
    expect(decodeCancelReply([-7])).toEqual({ ok: false, refusal: 'already_final' });
    expect(decodeCancelReply([-13])).toEqual({ ok: false, refusal: 'not_cancelled' });
    // -8 was "not cancelled" before the one code map: held_elsewhere now, which cancel never answers.
    expect(() => decodeCancelReply([-8])).toThrow(/cancel-3.lua: unknown code -8/);
  });

  it('replay: the new attempt, or why not', () => {
    expect(decodeReplayReply([0, 3, 'echo'])).toEqual({ ok: true, attempt: 3, capability: 'echo' });
    expect(decodeReplayReply([-1])).toEqual({ ok: false, refusal: 'unknown_task' });
    expect(decodeReplayReply([-9])).toEqual({ ok: false, refusal: 'not_dead' });
    expect(() => decodeReplayReply([-2])).toThrow(/replay-2.lua: unknown code -2/);
  });

  it('retry: another attempt, dead, or skipped with the reason', () => {
    expect(decodeRetryReply([1, 3, 'echo', 'topic', 5000, 'trace'])).toEqual({
      kind: 'retry',
      attempt: 3,
      capability: 'echo',
      dueAt: 5000,
      traceId: 'trace',
    });
    expect(decodeRetryReply([2, 4, 'echo', 'topic', 'max_attempts', ''])).toEqual({
      kind: 'dead',
      attempt: 4,
      capability: 'echo',
      callbackTopic: 'topic',
      reason: 'max_attempts',
      traceId: '',
    });
    expect(decodeRetryReply([-1])).toEqual({ kind: 'skipped', refusal: 'unknown_task' });
    expect(decodeRetryReply([-6])).toEqual({ kind: 'skipped', refusal: 'not_assigned' });
    expect(decodeRetryReply([-7])).toEqual({ kind: 'skipped', refusal: 'already_final' });
    expect(() => decodeRetryReply([-8])).toThrow(/retry-3.lua: unknown code -8/);
    expect(() => decodeRetryReply([3, 1])).toThrow(/retry-3.lua: unknown code 3/);
  });
});
