import type { Logger } from 'pino';
import { endpointView, type EndpointBody, type EndpointView } from '@agent-reach/protocol';
import {
  httpError,
  mayUseCapability,
  seesAllTenants,
  type OutboundHosts,
  type Principal,
} from '@agent-reach/service-kit';
import type { AgentRegistry } from '../registry/agent-registry.ts';
import { declarationProblem, storedDeclaration } from './endpoint-record.ts';
import type { EndpointStore, ReadDeclaration } from './endpoint-store.ts';
import { checkEndpointUrls } from './endpoint-urls.ts';

/** What the declarations API needs. */
export interface EndpointDeclarationsOptions {
  store: EndpointStore;
  /** Where a registered agent's tenant is read: an agent_id another tenant holds is refused. */
  agents: Pick<AgentRegistry, 'get'>;
  /**
   * Hosts an endpoint's URLs may name (REACH_ENDPOINT_HOSTS), and whether loopback ones too
   * (REACH_OUTBOUND_LOOPBACK with the auth decision).
   */
  allowed: OutboundHosts;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

/** How often a change is tried again when another writer changed the declaration meanwhile. */
const SWAP_TRIES = 5;

/**
 * The endpoint declarations API's rules (docs/ENDPOINTS.md): an agent or operator key declares
 * an endpoint agent of its tenant, serving capabilities the key covers; `shared` takes an
 * operator key; an agent_id another tenant holds (a declaration or a registered agent) is
 * refused; the endpoints file's entries are read-only; each key sees its tenant's declarations
 * (operators every tenant's), another tenant's is answered as if it did not exist. Secrets are
 * stored apart and never answered or logged.
 */
export class EndpointDeclarations {
  private readonly log: Logger;

  constructor(private readonly o: EndpointDeclarationsOptions) {
    this.log = o.logger.child({ module: 'endpoints' });
  }

  /**
   * Declares or replaces the endpoint agent `agentId` for `principal`.
   * @throws INVALID_ENDPOINT, FORBIDDEN, ENDPOINT_URL_NOT_ALLOWED, ENDPOINT_READ_ONLY
   */
  async declare(agentId: string, body: EndpointBody, principal: Principal): Promise<EndpointView> {
    const problem = declarationProblem(body);
    if (problem !== undefined) throw httpError('INVALID_ENDPOINT', problem);
    if (body.shared === true && principal.role !== 'operator')
      throw httpError('FORBIDDEN', 'only an operator key may declare a shared endpoint agent');
    const missing = (body.capabilities ?? []).filter((c) => !mayUseCapability(principal, c));
    if (missing.length > 0)
      throw httpError(
        'FORBIDDEN',
        `this key may not serve ${missing.join(', ')}; declare with a key whose capabilities cover them`,
      );
    checkEndpointUrls(body, this.o.allowed);
    await this.refuseAgentOfAnotherTenant(agentId, principal.tenant);
    for (let i = 0; i < SWAP_TRIES; i++) {
      const current = await this.o.store.read(agentId);
      if (current) {
        if (current.record.tenant !== principal.tenant) throw this.heldElsewhere(agentId);
        if (current.record.source === 'file') throw this.readOnly(agentId);
      }
      const next = storedDeclaration(body, {
        agentId,
        tenant: principal.tenant,
        keyCapabilities: principal.capabilities,
        source: 'api',
        now: (this.o.now ?? Date.now)(),
        ...(current ? { createdAt: current.record.created_at } : {}),
      });
      if (await this.o.store.swap(agentId, current, next)) {
        this.log.info(
          {
            agent_id: agentId,
            tenant: principal.tenant,
            protocol: body.protocol,
            key_id: principal.keyId,
            replaced: current !== undefined,
          },
          'endpoint agent declared',
        );
        return endpointView(next.record);
      }
    }
    throw new Error(`endpoint ${agentId}: the declaration kept changing while it was written`);
  }

  /** The declarations `principal` sees, by agent_id. */
  async list(principal: Principal): Promise<EndpointView[]> {
    const all = await this.o.store.list();
    return all
      .filter(({ record }) => seesAllTenants(principal) || record.tenant === principal.tenant)
      .map(({ record }) => endpointView(record));
  }

  /** One declaration as `principal` sees it. @throws ENDPOINT_NOT_FOUND */
  async get(agentId: string, principal: Principal): Promise<EndpointView> {
    return endpointView((await this.visible(agentId, principal)).record);
  }

  /**
   * Removes a declaration (relays stop serving the agent when they hear of it).
   * @throws ENDPOINT_NOT_FOUND, ENDPOINT_READ_ONLY
   */
  async remove(agentId: string, principal: Principal): Promise<void> {
    for (let i = 0; i < SWAP_TRIES; i++) {
      const current = await this.visible(agentId, principal);
      if (current.record.source === 'file') throw this.readOnly(agentId);
      if (await this.o.store.swap(agentId, current, undefined)) {
        this.log.info(
          { agent_id: agentId, tenant: current.record.tenant, key_id: principal.keyId },
          'endpoint agent removed',
        );
        return;
      }
    }
    throw new Error(`endpoint ${agentId}: the declaration kept changing while it was removed`);
  }

  /** The declaration if `principal` may see it. @throws ENDPOINT_NOT_FOUND */
  private async visible(agentId: string, principal: Principal): Promise<ReadDeclaration> {
    const current = await this.o.store.read(agentId);
    // Another tenant's declaration is answered like one that does not exist.
    if (!current || !(seesAllTenants(principal) || current.record.tenant === principal.tenant))
      throw httpError('ENDPOINT_NOT_FOUND', `no endpoint agent ${agentId} is declared`);
    return current;
  }

  private async refuseAgentOfAnotherTenant(agentId: string, tenant: string): Promise<void> {
    const agent = await this.o.agents.get(agentId);
    if (agent && agent.tenant !== tenant) throw this.heldElsewhere(agentId);
  }

  private heldElsewhere(agentId: string): Error {
    return httpError(
      'FORBIDDEN',
      `agent ${agentId} belongs to another tenant; choose another agent_id or declare with a key of its tenant`,
    );
  }

  private readOnly(agentId: string): Error {
    return httpError(
      'ENDPOINT_READ_ONLY',
      `endpoint agent ${agentId} comes from the endpoints file (REACH_ENDPOINTS_FILE); change it there`,
    );
  }
}
