import { describe, expect, it } from 'vitest';
import type { AgentStatus, SnapshotAgent } from '@agent-reach/protocol';
import { HashRing } from './hash-ring.ts';
import { rankCandidates } from './select.ts';

function agent(
  id: string,
  inflight: number,
  max = 10,
  status: AgentStatus = 'HEALTHY',
): SnapshotAgent {
  return {
    agent_id: id,
    instance_id: `${id}-i`,
    epoch: 1,
    status,
    capabilities: ['echo'],
    max_concurrency: max,
    inflight,
    region: '',
    channel: 'push',
    lease_age_ms: 0,
  };
}

const order = (agents: SnapshotAgent[], taskId = 't1') =>
  rankCandidates(agents, taskId, new HashRing(agents.map((a) => a.agent_id))).map(
    (r) => r.agent.agent_id,
  );

describe('rankCandidates', () => {
  it('puts the lowest load ratio first', () => {
    expect(order([agent('a', 5), agent('b', 1), agent('c', 3)])).toEqual(['b', 'c', 'a']);
  });

  it('compares load as a ratio of max_concurrency', () => {
    // a: 4/8 = 0.5, b: 3/4 = 0.75
    expect(order([agent('b', 3, 4), agent('a', 4, 8)])).toEqual(['a', 'b']);
  });

  it('never offers OFFLINE, STARTING or DRAINING agents', () => {
    const ids = order([
      agent('a', 0, 10, 'OFFLINE'),
      agent('b', 0, 10, 'DRAINING'),
      agent('c', 0, 10, 'STARTING'),
    ]);
    expect(ids).toEqual([]);
  });

  it('uses SUSPECT agents only when no HEALTHY one exists', () => {
    expect(order([agent('s', 0, 10, 'SUSPECT'), agent('h', 9)])).toEqual(['h']);
    expect(order([agent('s', 0, 10, 'SUSPECT'), agent('o', 0, 10, 'OFFLINE')])).toEqual(['s']);
  });

  it('breaks ties by the hash ring: a task_id keeps its agent while loads are equal', () => {
    const agents = ['a', 'b', 'c', 'd'].map((id) => agent(id, 2));
    const firsts = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const first = order(agents, `task-${i}`)[0] as string;
      expect(order([...agents].reverse(), `task-${i}`)[0]).toBe(first);
      firsts.add(first);
    }
    expect(firsts.size).toBe(4);
  });

  it('uses the live inflight count when the router has a fresher one', () => {
    const agents = [agent('a', 0), agent('b', 5)];
    const ring = new HashRing(['a', 'b']);
    const ranked = rankCandidates(agents, 't', ring, (a) => (a.agent_id === 'a' ? 8 : a.inflight));
    expect(ranked.map((r) => r.agent.agent_id)).toEqual(['b', 'a']);
    expect(ranked[0]?.load).toBe(0.5);
  });
});
