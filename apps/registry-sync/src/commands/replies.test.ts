import { describe, expect, it } from 'vitest';
import { isScriptReplyError } from '@agent-reach/protocol';
import { decodeAckAgentReplies } from './ack-agent.ts';
import { decodeAckTaskReplies } from './ack-task.ts';
import { decodeDeregisterReply } from './deregister.ts';
import { decodeHeartbeatReply } from './heartbeat.ts';
import { decodeLeaseReply } from './lease.ts';
import { decodeOutputReply } from './output.ts';
import { decodeRegisterReply } from './register.ts';
import { decodeReleaseReply } from './release.ts';
import { decodeRenewReply } from './renew.ts';
import { decodeRequeueReply } from './requeue.ts';
import { decodeServeReply } from './serve.ts';
import { decodeOutcomesReply } from '../health/commands/outcomes.ts';

describe('script replies', () => {
  it('name the slots of ack-task-n.lua per ack, reading a hash field the task lacks as empty', () => {
    const [applied, refused, again] = decodeAckTaskReplies(
      [
        0,
        'echo',
        null,
        null,
        0,
        10,
        2,
        1,
        0,
        -7,
        '',
        '',
        '',
        0,
        0,
        0,
        0,
        0,
        1,
        '',
        '',
        '',
        0,
        0,
        0,
        0,
        0,
      ],
      3,
    );
    expect(applied).toEqual({
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
    expect(refused).toEqual({ ok: false, refusal: 'already_final' });
    // A pooled task not recorded as sent yet: an error the ack consumer retries, as Redis' own.
    expect(again).toBeInstanceOf(Error);
    expect((again as Error).message).toMatch(/^TRYAGAIN /);
    expect(() => decodeAckTaskReplies([0, 'echo', null, null, 0, 10, 2, 1, 0], 2)).toThrow(
      /9 slots for 2 acks/,
    );
  });

  it('turn codes into refusals through the one map, and refuse a code the script does not answer', () => {
    const pad = ['', '', '', 0, 0, 0, 0, 0];
    expect(decodeAckTaskReplies([-10, ...pad], 1)).toEqual([
      { ok: false, refusal: 'not_eligible' },
    ]);
    expect(decodeAckAgentReplies(['', '[]', '[]', -5, '', '', 0, 0, 0])).toEqual([
      { ok: false, refusal: 'unknown_agent' },
    ]);
    expect(decodeHeartbeatReply([-2, 4])).toEqual({
      ok: false,
      refusal: 'stale_epoch',
      currentEpoch: 4,
    });
    expect(decodeDeregisterReply([-3])).toEqual({ ok: false, refusal: 'wrong_token' });
    expect(decodeDeregisterReply([3, 1, 'i-1', 'DRAINING'])).toEqual({
      ok: true,
      epoch: 3,
      pending: 1,
      instanceId: 'i-1',
      previous: 'DRAINING',
    });
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
    expect(() => decodeAckTaskReplies('nonsense', 1)).toThrow(/ack-task-n.lua/);
    expect(() => decodeAckTaskReplies([-3, ...pad], 1)).toThrow(/unknown code -3/);
  });

  it('read the agent steps of a batch with their probe and shadow marks and, for a pooled ack, the agent’s placement', () => {
    const placement = ['eu', '["gpu"]', '["embed"]'];
    expect(
      decodeAckAgentReplies([...placement, 0, '5-0', '', 0, 1, 0, 0, '6-0', '', 0, 2, 0]),
    ).toEqual([
      {
        ok: true,
        sentAt: 5,
        poolEntry: '',
        speedTracked: false,
        probe: true,
        shadow: false,
        entryId: '5-0',
      },
      {
        ok: true,
        sentAt: 6,
        poolEntry: '',
        speedTracked: false,
        probe: false,
        shadow: true,
        entryId: '6-0',
      },
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
        shadow: false,
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

  it('read output, renew and lease, and refuse a code a script does not answer', () => {
    expect(decodeOutputReply([0, 2, 1, 1, 'topic', 'echo', 3, 10])).toEqual({
      ok: true,
      kept: 2,
      truncated: true,
      first: true,
      topic: 'topic',
      capability: 'echo',
      attempt: 3,
      receivedAt: 10,
    });
    expect(decodeOutputReply([-7])).toEqual({ ok: false, refusal: 'already_final' });
    expect(() => decodeOutputReply([-10])).toThrow(/output-3.lua: unknown code -10/);
    expect(decodeRenewReply(2)).toEqual({ ok: true, renewed: 2 });
    expect(decodeRenewReply(-2)).toEqual({ ok: false, refusal: 'stale_epoch' });
    expect(() => decodeRenewReply(-7)).toThrow(/renew-3.lua/);
    expect(decodeLeaseReply(['DRAINING', 'GONE', 40, 0, 0])).toEqual({
      previous: 'DRAINING',
      status: 'GONE',
      leaseAgeMs: 40,
      pending: 0,
      damped: false,
    });
    expect(decodeLeaseReply(['HEALTHY', 'SUSPECT', 15_020, 0, 1])).toMatchObject({
      status: 'SUSPECT',
      damped: true,
    });
  });

  it('read the health window’s outcome, and throw on a reply of another shape', () => {
    expect(decodeOutcomesReply([1, 0, 'HEALTHY'])).toEqual({
      suspected: true,
      cleared: false,
      previous: 'HEALTHY',
    });
    expect(decodeOutcomesReply([0, 0, ''])).toEqual({
      suspected: false,
      cleared: false,
      previous: '',
    });
    expect(() => decodeOutcomesReply([0, 0])).toThrow(/outcomes-1.lua: slot 3/);
    expect(() => decodeOutcomesReply('x')).toThrow(/outcomes-1.lua/);
  });
});
