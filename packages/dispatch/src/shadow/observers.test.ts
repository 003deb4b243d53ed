import { describe, expect, it } from 'vitest';
import type { SnapshotAgent } from '@agent-reach/protocol';
import { observersFor } from './shadow-mirror.ts';

const agent = (id: string, o: Partial<SnapshotAgent> = {}): SnapshotAgent => ({
  agent_id: id,
  instance_id: 'i',
  epoch: 1,
  status: 'HEALTHY',
  capabilities: ['chat'],
  max_concurrency: 4,
  inflight: 0,
  region: '',
  channel: 'push',
  lease_age_ms: 0,
  ...o,
});

describe('the agents a shadow copy goes to', () => {
  const agents = [
    agent('serving'),
    agent('watch', { observe: true }),
    agent('watch-acme', { observe: true, tenant: 'acme' }),
    agent('watch-shared', { observe: true, tenant: 'acme', shared: true }),
    agent('watch-off', { observe: true, status: 'OFFLINE' }),
    agent('watch-starting', { observe: true, status: 'STARTING' }),
  ];

  it('are the live observing agents of the task’s tenant, and shared ones', () => {
    expect(observersFor(agents, { tenant: '' }).map((a) => a.agent_id)).toEqual([
      'watch',
      'watch-shared',
    ]);
    expect(observersFor(agents, { tenant: 'acme' }).map((a) => a.agent_id)).toEqual([
      'watch-acme',
      'watch-shared',
    ]);
    expect(observersFor(agents, { tenant: 'other' }).map((a) => a.agent_id)).toEqual([
      'watch-shared',
    ]);
  });
});
