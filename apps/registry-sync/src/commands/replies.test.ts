import { describe, expect, it } from 'vitest';
import {
  decodeAckAgentReplies,
  decodeAckTaskReply,
  decodeDeregisterReply,
  decodeHeartbeatReply,
  decodeRegisterReply,
  decodeReleaseReply,
  decodeServeReply,
  decodeRequeueReply,
  isScriptReplyError,
} from './index.ts';

describe('script replies', () => {
  it('name the slots of ack-task-2.lua, reading a hash field the task lacks as empty', () => {
    expect(decodeAckTaskReply([0, 'echo', null, null, 0, 10, 2, 1, 0])).toEqual({
      ok: true,
      capability: 'echo',
      callbackTopic: '',
      traceId: '',
      receivedAt: 0,
      sentAt: 10,
      attempt: 2,
      final: true,
      foldedRecorded: false,
    });
  });

  it('turn codes into refusals through the one map, and refuse a code the script does not answer', () => {
    expect(decodeAckTaskReply([-10])).toEqual({ ok: false, refusal: 'not_eligible' });
    expect(decodeAckTaskReply([-7])).toEqual({ ok: false, refusal: 'duplicate' });
    expect(decodeAckAgentReplies(['', '[]', '[]', -5, '', '', 0, 0, 0])).toEqual([
      { ok: false, refusal: 'unknown_agent' },
    ]);
    expect(decodeHeartbeatReply([-2, 4])).toEqual({
      ok: false,
      refusal: 'stale_epoch',
      currentEpoch: 4,
    });
    expect(decodeDeregisterReply([-3])).toEqual({ ok: false, refusal: 'wrong_token' });
    expect(decodeRegisterReply([-11, 'acme'])).toEqual({
      ok: false,
      refusal: 'other_tenant',
      owner: 'acme',
    });
    expect(decodeRegisterReply([2, 5, 1, 'k', 'old'])).toEqual({
      ok: true,
      epoch: 2,
      nowMs: 5,
      newInstance: true,
      ackKey: 'k',
      fenced: 'old',
    });
    expect(decodeServeReply([-3])).toEqual({ ok: false, refusal: 'wrong_token' });
    expect(decodeServeReply([4])).toEqual({ ok: true, epoch: 4 });
    let caught: unknown;
    try {
      decodeAckAgentReplies(['', '[]', '[]', -6, '', '', 0, 0, 0]);
    } catch (err: unknown) {
      caught = err;
    }
    expect(isScriptReplyError(caught)).toBe(true);
    expect(() => decodeAckTaskReply('nonsense')).toThrow(/ack-task-2.lua/);
  });

  it('read the agent steps of a batch with their probe marks and, for a pooled ack, the agent’s placement', () => {
    const placement = ['eu', '["gpu"]', '["embed"]'];
    expect(decodeAckAgentReplies([...placement, 0, '5-0', '', 0, 1, 0])).toEqual([
      { ok: true, sentAt: 5, poolEntry: '', speedTracked: false, probe: true, entryId: '5-0' },
    ]);
    expect(
      decodeAckAgentReplies([...placement, 0, '1-1', '1-1', 1, 0, 1, -5, '', '', 0, 0, 0]),
    ).toEqual([
      {
        ok: true,
        sentAt: 1,
        poolEntry: '1-1',
        speedTracked: true,
        probe: false,
        entryId: '1-1',
        placement: { region: 'eu', tags: ['gpu'], capabilities: ['embed'] },
      },
      { ok: false, refusal: 'unknown_agent' },
    ]);
    expect(() => decodeAckAgentReplies([...placement, 0, '1-1'])).toThrow(/ack-agent-3.lua/);
  });

  it('read release and requeue', () => {
    expect(decodeReleaseReply([1, 'embed', '1-1'])).toEqual({
      released: true,
      pool: { capability: 'embed', entryId: '1-1' },
    });
    expect(decodeReleaseReply([0, '', ''])).toEqual({ released: false });
    expect(decodeRequeueReply('')).toBeUndefined();
    expect(decodeRequeueReply('2-0')).toBe('2-0');
  });
});
