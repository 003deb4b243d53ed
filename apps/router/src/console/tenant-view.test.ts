import { describe, expect, it } from 'vitest';
import { OPEN_PRINCIPAL, type Principal } from '@agent-reach/service-kit';
import type { ConsoleAgentsReply } from './schemas.ts';
import { ConsoleTenantView } from './tenant-view.ts';

const acme: Principal = {
  keyId: 'k1',
  tenant: 'acme',
  role: 'caller',
  capabilities: ['*'],
  open: false,
};

const agent = (agent_id: string, tenant: string, shared = false) =>
  ({
    agent_id,
    instance_id: `${agent_id}-i`,
    epoch: 3,
    tenant,
    shared,
    recent: { completed: 1, failed: 0, success_rate: 1 },
  }) as unknown as ConsoleAgentsReply['agents'][number];

describe('ConsoleTenantView', () => {
  it('shows a caller its tenant’s and the shared agents, without instance ids and epochs', () => {
    const reply = {
      agents: [agent('a', 'acme'), agent('g', 'globex'), agent('s', 'default', true)],
      total: 3,
      sampled_tasks: 0,
    };
    const seen = new ConsoleTenantView(acme).agents(reply);
    expect(seen.agents.map((a) => a.agent_id)).toEqual(['a', 's']);
    expect(seen.agents[0]).not.toHaveProperty('epoch');
    expect(seen.agents[0]).not.toHaveProperty('instance_id');
    expect(seen.total).toBe(2);
    expect(new ConsoleTenantView(OPEN_PRINCIPAL).agents(reply)).toBe(reply);
  });

  it('passes a caller the fleet events of its tenant’s tasks only, named as it names them', () => {
    const view = new ConsoleTenantView(acme);
    expect(view.event({ kind: 'retried', at: 1, task_id: 'acme/t-1' } as never)).toMatchObject({
      task_id: 't-1',
    });
    expect(view.event({ kind: 'retried', at: 1, task_id: 'globex/t-1' } as never)).toBeUndefined();
    expect(view.event({ kind: 'registered', at: 1, agent_id: 'a' } as never)).toBeUndefined();
    const op = new ConsoleTenantView(OPEN_PRINCIPAL);
    expect(op.event({ kind: 'registered', at: 1, agent_id: 'a' } as never)).toMatchObject({
      agent_id: 'a',
    });
  });
});
