import { describe, expect, it } from 'vitest';
import { decodeTaskRecord, type TaskRecord } from '@agent-reach/protocol';
import { packRoute, taskTimeline, unpackRoute } from './timeline.ts';

/** The task hash as the readers decode it. */
function record(hash: Record<string, string>): TaskRecord {
  const task = decodeTaskRecord(hash);
  if (!task) throw new Error('a task hash without a status');
  return task;
}

describe('packRoute', () => {
  it('keeps a routing record short and reads it back', () => {
    const route = {
      score: 0.1234,
      load: 0.25,
      candidates: 2,
      snapshot_age_ms: 249,
      runner_up: 'agent-2',
      runner_up_score: 0.5,
    };
    expect(packRoute(route)).toBe('0.1234|0.25|2|249|agent-2|0.5');
    expect(packRoute(route).length).toBeLessThan(64);
    expect(unpackRoute(packRoute(route))).toEqual(route);
    const retry = {
      score: 0,
      load: 0,
      candidates: 1,
      reason: 'retry; re-routed after a1:full',
      previous_agent: 'a1',
    };
    expect(unpackRoute(packRoute(retry))).toEqual(retry);
    const pooled = { pool: 'embed', reason: 'batch' };
    expect(unpackRoute(packRoute(pooled))).toEqual(pooled);
    // An agent short of HEALTHY (a DEGRADED one taking what HEALTHY ones had no room for).
    const degraded = { score: 0.9, load: 0.5, candidates: 2, agent_status: 'DEGRADED' };
    expect(packRoute(degraded)).toBe('0.9|0.5|2||||agent_status=DEGRADED');
    expect(unpackRoute(packRoute(degraded))).toEqual(degraded);
    // A send to a fallback capability: which one, and that it was a fallback.
    const fallback = { score: 0.2, load: 0, candidates: 1, capability: 'lite', fallback: true };
    expect(packRoute(fallback)).toBe('0.2|0|1||||fallback=lite');
    expect(unpackRoute(packRoute(fallback))).toEqual(fallback);
  });
});

describe('taskTimeline with a priority', () => {
  it('shows a priority above 0 at the accepted stage', () => {
    const accepted = (priority?: string) =>
      taskTimeline(
        record({
          status: 'accepted',
          attempt: '1',
          created_at: '100',
          ...(priority ? { priority } : {}),
        }),
        [],
      ).timeline[0];
    expect(accepted('7')).toEqual({ stage: 'accepted', at: 100, priority: 7 });
    expect(accepted()).toEqual({ stage: 'accepted', at: 100 });
  });
});

describe('taskTimeline', () => {
  const route = packRoute({ score: 0, load: 0, candidates: 1, snapshot_age_ms: 12 });

  it('builds an ordinary task’s stages from its hash alone', () => {
    const hash = {
      status: 'completed',
      attempt: '1',
      agent_id: 'a1',
      created_at: '100',
      sent_at: '102',
      message_id: '102-0',
      route,
      received_at: '110',
      completed_at: '150',
      duration_ms: '7',
    };
    expect(taskTimeline(record(hash), [])).toEqual({
      status: 'completed',
      timeline: [
        { stage: 'accepted', at: 100 },
        {
          stage: 'sent',
          at: 102,
          attempt: 1,
          message_id: '102-0',
          agent_id: 'a1',
          routing: { score: 0, load: 0, candidates: 1, snapshot_age_ms: 12 },
        },
        { stage: 'received', at: 110, agent_id: 'a1', attempt: 1 },
        { stage: 'completed', at: 150, agent_id: 'a1', attempt: 1, duration_ms: 7 },
      ],
    });
  });

  it('shows a delivered task that no ack reached yet as sent, from its agent’s pending entry', () => {
    const hash = { status: 'accepted', attempt: '2', agent_id: 'a1', created_at: '100', route };
    const pending = {
      taskId: 't',
      attempt: 2,
      messageId: '105-0',
      sentAt: 105,
      deadlineMs: 0,
      receivedAt: 0,
      epoch: 1,
      probe: false,
    };
    const view = taskTimeline(record(hash), [], pending);
    expect(view.status).toBe('sent');
    expect(view.timeline.map((e) => [e.stage, e.at])).toEqual([
      ['accepted', 100],
      ['sent', 105],
    ]);
    // A delivery of another attempt is not this one's.
    expect(taskTimeline(record(hash), [], { ...pending, attempt: 1 }).status).toBe('accepted');
  });

  it('merges the earlier attempts and exceptional stages of the list, in time order', () => {
    const lines = [
      '{"stage":"failed","at":150,"agent_id":"a1","attempt":1,"error":"boom"}',
      `{"stage":"sent","at":102,"attempt":1,"message_id":"102-0","agent_id":"a1","route":"${route}"}`,
      '{"stage":"received","at":110,"agent_id":"a1","attempt":1}',
      '{"stage":"retried","at":150,"attempt":2,"reason":"failed","due_at":2150,"agent_id":"a1"}',
      'not json',
    ];
    const hash = {
      status: 'received',
      attempt: '2',
      agent_id: 'a2',
      created_at: '100',
      sent_at: '2150',
      message_id: '2150-0',
      received_at: '2153',
    };
    const { timeline } = taskTimeline(record(hash), lines);
    expect(timeline.map((e) => `${e.stage}:${e.attempt ?? ''}`)).toEqual([
      'accepted:',
      'sent:1',
      'received:1',
      'failed:1',
      'retried:2',
      'sent:2',
      'received:2',
    ]);
    expect(timeline[1]).toMatchObject({ routing: { snapshot_age_ms: 12 } });
    expect(timeline[1]).not.toHaveProperty('route');
  });

  it('names no agent in the sent stage of a pooled task', () => {
    const hash = {
      status: 'received',
      attempt: '1',
      agent_id: 'pull-1',
      created_at: '100',
      sent_at: '101',
      message_id: '101-0',
      route: packRoute({ pool: 'embed', reason: 'batch' }),
      received_at: '120',
    };
    const sent = taskTimeline(record(hash), []).timeline.find((e) => e.stage === 'sent');
    expect(sent).toEqual({
      stage: 'sent',
      at: 101,
      attempt: 1,
      message_id: '101-0',
      routing: { pool: 'embed', reason: 'batch' },
    });
  });
});
