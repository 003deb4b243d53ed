import { describe, expect, it } from 'vitest';
import {
  decodeAck,
  decodeCallback,
  decodeTask,
  encodeAck,
  encodeCallback,
  encodeTask,
  streamIdMs,
} from './codecs.ts';

describe('task entries', () => {
  it('round-trips a task', () => {
    const task = {
      task_id: 't1',
      capability: 'echo',
      payload: '{"a":1}',
      attempt: 2,
      trace_id: 'tr',
      callback_topic: 'cb',
      deadline_ms: 123,
    };
    expect(decodeTask(encodeTask(task))).toEqual({ ok: true, value: task });
  });

  it('round-trips the placement fields, leaving out empty ones', () => {
    const base = {
      task_id: 't1',
      capability: 'echo',
      payload: 'null',
      attempt: 1,
      trace_id: '',
      callback_topic: '',
      deadline_ms: 0,
    };
    const placed = {
      ...base,
      tags: ['gpu', 'fast'],
      region: 'eu',
      region_policy: 'strict' as const,
    };
    const fields = encodeTask(placed);
    expect(fields).toEqual(
      expect.arrayContaining(['tags', '["gpu","fast"]', 'region', 'eu', 'region_policy', 'strict']),
    );
    expect(decodeTask(fields)).toEqual({ ok: true, value: placed });
    // No tags, no region: no fields, and a policy without a region is not written.
    const bare = encodeTask({ ...base, tags: [], region: '', region_policy: 'strict' });
    expect(bare).not.toContain('tags');
    expect(bare).not.toContain('region');
    expect(bare).not.toContain('region_policy');
    expect(decodeTask(bare)).toEqual({ ok: true, value: base });
  });

  it("reads a raw producer's empty placement fields as none, and a region without a policy as prefer", () => {
    const raw = ['task_id', 't1', 'capability', 'echo', 'attempt', '1'];
    expect(decodeTask([...raw, 'tags', '', 'region', '', 'region_policy', 'nonsense'])).toEqual({
      ok: true,
      value: expect.not.objectContaining({ tags: expect.anything(), region: expect.anything() }),
    });
    expect(decodeTask([...raw, 'tags', '[]'])).toMatchObject({ ok: true });
    expect(decodeTask([...raw, 'region', 'us'])).toMatchObject({
      ok: true,
      value: { region: 'us', region_policy: 'prefer' },
    });
  });

  it('refuses an entry whose placement cannot be read: it must not run anywhere it should not', () => {
    const raw = ['task_id', 't1', 'capability', 'echo', 'attempt', '1'];
    for (const bad of [
      ['tags', 'gpu'],
      ['tags', '{"gpu":true}'],
      ['tags', '["gpu", 3]'],
      ['tags', '["{slot}"]'],
      ['region', 'e u'],
      ['region', 'eu', 'region_policy', 'strictly'],
    ]) {
      expect(decodeTask([...raw, ...bad])).toMatchObject({ ok: false });
    }
  });

  it('refuses entries without a valid task_id or attempt', () => {
    expect(decodeTask(['capability', 'echo', 'attempt', '1']).ok).toBe(false);
    expect(decodeTask(['task_id', 't1', 'capability', 'echo', 'attempt', 'zero']).ok).toBe(false);
  });
});

describe('acks', () => {
  it('round-trips a completion and a failure', () => {
    const done = {
      task_id: 't1',
      stage: 'completed' as const,
      agent_id: 'a',
      instance_id: 'i',
      epoch: 3,
      attempt: 1,
      result: '{"ok":true}',
      duration_ms: 12,
    };
    expect(decodeAck(encodeAck(done))).toEqual({ ok: true, value: done });
    const failed = {
      task_id: 't1',
      stage: 'failed' as const,
      agent_id: 'a',
      instance_id: 'i',
      epoch: 3,
      attempt: 1,
      error: 'boom',
      error_code: 'MODEL_NOT_LOADED',
      retryable: false,
    };
    expect(decodeAck(encodeAck(failed))).toEqual({ ok: true, value: failed });
    // A code that is not one is no reason to refuse the failure: it counts as HANDLER_ERROR.
    const odd = decodeAck(encodeAck({ ...failed, error_code: 'not a code' }));
    expect(odd.ok && odd.value.error_code).toBe('HANDLER_ERROR');
  });

  it('round-trips the optional capability and folded receipt of a completion, and refuses a bad capability', () => {
    const done = {
      task_id: 't1',
      stage: 'completed' as const,
      agent_id: 'a',
      instance_id: 'i',
      epoch: 3,
      attempt: 1,
      result: '1',
      duration_ms: 0,
      capability: 'echo',
      received_ago_ms: 2,
    };
    expect(decodeAck(encodeAck(done))).toEqual({ ok: true, value: done });
    expect(decodeAck([...encodeAck(done).slice(0, -4), 'capability', '{echo}']).ok).toBe(false);
    // A receipt cannot stand for another receipt.
    const receipt = decodeAck([
      'task_id',
      't1',
      'stage',
      'received',
      'agent_id',
      'a',
      'epoch',
      '1',
      'received_ago_ms',
      '5',
    ]);
    expect(receipt.ok && receipt.value.received_ago_ms).toBe(undefined);
  });

  it('accepts a hand-written ack without attempt and defaults what a minimal worker may omit', () => {
    const res = decodeAck(['task_id', 't1', 'stage', 'failed', 'agent_id', 'a', 'epoch', '1']);
    expect(res).toEqual({
      ok: true,
      value: {
        task_id: 't1',
        stage: 'failed',
        agent_id: 'a',
        instance_id: '',
        epoch: 1,
        attempt: 0,
        error: 'unknown error',
        error_code: 'HANDLER_ERROR',
        retryable: true,
      },
    });
  });

  it.each([
    ['an unknown stage', ['task_id', 't1', 'stage', 'done', 'agent_id', 'a', 'epoch', '1']],
    ['no epoch', ['task_id', 't1', 'stage', 'received', 'agent_id', 'a']],
    [
      'a result that is not JSON',
      ['task_id', 't1', 'stage', 'completed', 'agent_id', 'a', 'epoch', '1', 'result', '{nope'],
    ],
    [
      'a task_id with a brace',
      ['task_id', '{t1}', 'stage', 'received', 'agent_id', 'a', 'epoch', '1'],
    ],
  ])('refuses %s with a reason', (_name, fields) => {
    const res = decodeAck(fields);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error.length).toBeGreaterThan(5);
  });
});

describe('callbacks and ids', () => {
  it('round-trips a callback entry', () => {
    const msg = {
      task_id: 't1',
      status: 'completed' as const,
      capability: 'echo',
      agent_id: 'a',
      attempt: 1,
      result: '1',
      duration_ms: 4,
      completed_at: 99,
    };
    expect(decodeCallback(encodeCallback(msg))).toEqual(msg);
  });

  it('reads the server time from a stream entry id', () => {
    expect(streamIdMs('1717171717171-3')).toBe(1717171717171);
  });
});
