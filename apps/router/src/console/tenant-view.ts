import { withoutInstance, type FleetEvent } from '@agent-reach/protocol';
import { seesAllTenants, type Principal } from '@agent-reach/service-kit';
import { TenantScope } from '../tasks/tenant-scope.ts';
import type { ConsoleAgentsReply, ConsoleLatencyReply } from './schemas.ts';

type LatencyPoint = ConsoleLatencyReply['points'][number];

/**
 * What the console shows a key (docs/SECURITY.md, Tenants): an operator everything; any other key
 * its tenant's tasks and the agents that serve its tenant (its own and the shared ones), without
 * the instance ids and epochs an ack names, as `GET /v1/agents` does. Task ids are named as the
 * key names them. Fleet events of agents alone (registrations, status changes) carry no tenant:
 * operators only.
 */
export class ConsoleTenantView {
  private readonly scope: TenantScope;
  /** Operators: nothing is filtered. */
  readonly all: boolean;

  constructor(private readonly principal: Principal) {
    this.scope = TenantScope.of(principal);
    this.all = seesAllTenants(principal);
  }

  /** The agent table as the key may see it. */
  agents(reply: ConsoleAgentsReply): ConsoleAgentsReply {
    if (this.all) return reply;
    const agents = reply.agents
      .filter((a) => a.shared || a.tenant === this.principal.tenant)
      .map((a) => ({ ...withoutInstance(a), recent: a.recent }));
    return { agents, total: agents.length, sampled_tasks: reply.sampled_tasks };
  }

  /** The latency points of the key's tenant's tasks. */
  points(points: readonly LatencyPoint[]): LatencyPoint[] {
    if (this.all) return [...points];
    return points
      .filter((p) => this.scope.sees(p.task_id))
      .map((p) => ({ ...p, task_id: this.scope.show(p.task_id) }));
  }

  /** A fleet event as the key may see it, or undefined. */
  event(event: FleetEvent): FleetEvent | undefined {
    if (this.all) return event;
    if (event.task_id === undefined || !this.scope.sees(event.task_id)) return undefined;
    return { ...event, task_id: this.scope.show(event.task_id) };
  }
}
