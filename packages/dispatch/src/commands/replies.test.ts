import { describe, expect, it } from 'vitest';
import { isScriptReplyError } from '@agent-reach/protocol';
import { decodeAssignReply } from './assign.ts';
import { decodeClaimReplies } from './claim.ts';
import { decodeDeliverReplies } from './deliver.ts';
import { holdScript } from './hold.ts';
import { decodePublishReplies } from './publish-callback.ts';
import { releaseClaimScript } from './release-claim.ts';

/** The error `decode` throws, which must be a ScriptReplyError. */
function replyError(decode: () => unknown): Error {
  try {
    decode();
  } catch (err: unknown) {
    if (isScriptReplyError(err)) return err;
    throw err;
  }
  throw new Error('decoded without an error');
}

describe('the send path scripts decode their replies', () => {
  it('claim: a created task takes the times the claim passed, per claim of the call', () => {
    const item = (now: number, timeoutMs: number) =>
      ({ now, timeoutMs }) as unknown as Parameters<typeof decodeClaimReplies>[1][number];
    expect(
      decodeClaimReplies(
        [0, 0, 0, 0, 0, 0, 1, 900, 0, 2, 0, 0],
        [item(1000, 500), item(1000, 0), item(1000, 500), item(1000, 500)],
      ),
    ).toEqual([
      { ours: true, created: true, createdAt: 1000, deadlineMs: 1500 },
      { ours: true, created: true, createdAt: 1000, deadlineMs: 0 },
      { ours: true, created: false, createdAt: 900, deadlineMs: 0 },
      { ours: false },
    ]);
    expect(replyError(() => decodeClaimReplies([3, 0, 0], [item(1, 0)])).message).toMatch(
      /claim-n.lua/,
    );
    // A reply of another length than the claims sent is not read slot by slot.
    expect(replyError(() => decodeClaimReplies([0, 0, 0], [])).message).toMatch(
      /1 claims|0 claims/,
    );
  });

  it('assign: the attempt taken, or why not; an unknown code throws', () => {
    expect(decodeAssignReply([0, 2, 100, 900])).toEqual({
      ok: true,
      attempt: 2,
      createdAt: 100,
      deadlineMs: 900,
    });
    expect(decodeAssignReply([-1, 0, 0, 0])).toEqual({ ok: false, refusal: 'unknown_task' });
    expect(decodeAssignReply([0, 1, 5, 6, -8, 0, 0, 0], 4)).toEqual({
      ok: false,
      refusal: 'held_elsewhere',
    });
    expect(replyError(() => decodeAssignReply([-9, 0, 0, 0])).message).toMatch(
      /assign-n.lua: unknown code/,
    );
  });

  it('deliver: one reply per task, refusals named by the one code map', () => {
    expect(
      decodeDeliverReplies([
        5000,
        0,
        '4000-0',
        1,
        1,
        '3000-1',
        2,
        -4,
        '',
        2,
        -2,
        '',
        0,
        -12,
        '',
        0,
        -5,
        '',
        0,
      ]),
    ).toEqual([
      { ok: true, messageId: '4000-0', sentAt: 4000, inflight: 1 },
      { ok: true, messageId: '3000-1', sentAt: 3000, inflight: 2 },
      { ok: false, refusal: 'full' },
      { ok: false, refusal: 'stale_epoch' },
      { ok: false, refusal: 'not_live' },
      { ok: false, refusal: 'unknown_agent' },
    ]);
    // -1 and -3 were this script's "agent gone" and "not live" before the one code map.
    expect(() => decodeDeliverReplies([5000, -1, '', 0])).toThrow(/unknown code -1/);
    expect(() => decodeDeliverReplies([5000, -3, '', 0])).toThrow(/unknown code -3/);
  });

  it('publish-callback: an entry id, or null for a result published before', () => {
    expect(decodePublishReplies(['1-0', 0])).toEqual(['1-0', null]);
    expect(replyError(() => decodePublishReplies([false])).message).toMatch(
      /publish-callback-n.lua/,
    );
  });

  it('hold and release-claim: their states by name', () => {
    expect(holdScript.decode([0, 1, 2], {} as never, [{}, {}, {}] as never)).toEqual([
      'created',
      'ours',
      'exists',
    ]);
    expect([0, 1, 2].map((raw) => releaseClaimScript.decode(raw, {} as never, []))).toEqual([
      'not_ours',
      'released',
      'kept',
    ]);
    expect(() => holdScript.decode([3], {} as never, [{}] as never)).toThrow(/hold-n.lua/);
    expect(() => holdScript.decode([0], {} as never, [{}, {}] as never)).toThrow(
      /1 replies for 2 holds/,
    );
  });
});
