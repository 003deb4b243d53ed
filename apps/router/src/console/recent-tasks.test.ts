import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '@agent-reach/protocol';
import { RecentTasks, summarise, type AgentOutcomes } from './recent-tasks.ts';

const sent = (task_id: string) => ({
  stage: 'sent' as const,
  task_id,
  capability: 'c',
  agent_id: 'a',
  attempt: 1,
  at: 1,
});

describe('RecentTasks', () => {
  it('keeps the newest sent tasks, newest first, within its capacity', () => {
    const ring = new RecentTasks(3);
    for (const id of ['t1', 't2', 't3', 't4']) ring.note(sent(id));
    ring.note({ ...sent('t9'), stage: 'received' });
    expect(ring.newest(10)).toEqual(['t4', 't3', 't2']);
    expect(ring.newest(2)).toEqual(['t4', 't3']);
    expect(new RecentTasks(3).newest(5)).toEqual([]);
  });
});

describe('summarise', () => {
  it('measures the last attempt and counts each agent’s results', () => {
    const agents = new Map<string, AgentOutcomes>();
    const timeline: TimelineEntry[] = [
      { stage: 'accepted', at: 100 },
      { stage: 'sent', at: 102, agent_id: 'a1', attempt: 1 },
      { stage: 'received', at: 110, agent_id: 'a1', attempt: 1 },
      { stage: 'failed', at: 150, agent_id: 'a1', attempt: 1, error_code: 'MODEL_NOT_LOADED' },
      { stage: 'sent', at: 2150, agent_id: 'a2', attempt: 2 },
      { stage: 'received', at: 2153, agent_id: 'a2', attempt: 2 },
      { stage: 'completed', at: 2253, agent_id: 'a2', attempt: 2 },
    ];
    const point = summarise('t1', ['completed', 'echo'], timeline, agents);
    expect(point).toEqual({
      task_id: 't1',
      capability: 'echo',
      agent_id: 'a2',
      status: 'completed',
      at: 2150,
      receipt_ms: 3,
      execution_ms: 100,
    });
    expect(Object.fromEntries(agents)).toEqual({
      a1: { completed: 0, failed: 1, failures_by_code: { MODEL_NOT_LOADED: 1 } },
      a2: { completed: 1, failed: 0, failures_by_code: {} },
    });
  });

  it('gives what is known of a task still in flight, and nothing for an expired one', () => {
    const agents = new Map<string, AgentOutcomes>();
    const point = summarise(
      't2',
      ['sent', 'echo'],
      [
        { stage: 'accepted', at: 5 },
        { stage: 'sent', at: 7, agent_id: 'a1', attempt: 1 },
      ],
      agents,
    );
    expect(point).toEqual({
      task_id: 't2',
      capability: 'echo',
      agent_id: 'a1',
      status: 'sent',
      at: 7,
      delivery_ms: 2,
    });
    expect(summarise('t3', [null, null], [], agents)).toBeUndefined();
  });
});
