import type { Logger } from 'pino';
import type {
  EndpointRecord,
  EndpointRegisterBody,
  RegisterBody,
  RegisterReply,
} from '@agent-reach/protocol';
import { httpError, type Principal } from '@agent-reach/service-kit';
import type { FleetEventLog } from '@agent-reach/dispatch';
import type { AgentRegistry } from '../registry/agent-registry.ts';
import type { EndpointStore } from './endpoint-store.ts';

/** What a relay's registration of an endpoint agent needs. */
export interface EndpointRegistrationOptions {
  store: EndpointStore;
  registry: AgentRegistry;
  /** Where registrations are announced, as the register route announces them. */
  fleet: FleetEventLog;
  /** Writes a snapshot so routers learn of the agent; awaited before the reply. */
  onRegistryChange: (agentIds: readonly string[]) => Promise<void>;
  logger: Logger;
}

/** Those of `capabilities` the declaration does not let a relay register. */
function refusedCapabilities(record: EndpointRecord, capabilities: readonly string[]): string[] {
  const declared = record.capabilities;
  const coveredByKey = (c: string) =>
    record.key_capabilities.includes('*') || record.key_capabilities.includes(c);
  // An http endpoint serves exactly what was declared; an a2a or mcp one what it was found to
  // serve, within the declared list when there is one and always within the declaring key's.
  return capabilities.filter(
    (c) => (declared !== undefined && !declared.includes(c)) || !coveredByKey(c),
  );
}

/**
 * A relay registers an endpoint agent it serves (`POST /v1/endpoints/:agent_id/register`): the
 * declaration decides what is registered — its tenant (an operator's principal when `shared`),
 * placement and meta, the capabilities it allows — and the relay adds what it found: the
 * capabilities, their input schemas, the card. The agent is a real agent instance from then
 * on, marked `relay` so that deliveries wake its relay.
 */
export class EndpointRegistration {
  private readonly log: Logger;

  constructor(private readonly o: EndpointRegistrationOptions) {
    this.log = o.logger.child({ module: 'endpoints' });
  }

  /**
   * Registers `agentId` as `body` says, within its declaration.
   * @throws ENDPOINT_NOT_FOUND, FORBIDDEN (a capability the declaration does not allow, or the
   *   agent_id held by another tenant), INVALID_BODY, INVALID_INPUT_SCHEMA
   */
  async register(
    agentId: string,
    body: EndpointRegisterBody,
    relay: Principal,
  ): Promise<RegisterReply> {
    const found = await this.o.store.read(agentId);
    if (!found)
      throw httpError(
        'ENDPOINT_NOT_FOUND',
        `no endpoint agent ${agentId} is declared; declare it before registering it`,
      );
    const { record } = found;
    const refused = refusedCapabilities(record, body.capabilities);
    if (refused.length > 0)
      throw httpError(
        'FORBIDDEN',
        `endpoint agent ${agentId} may not serve ${refused.join(', ')}: ${
          record.protocol === 'http'
            ? 'an http endpoint serves only its declared capabilities'
            : 'not among its declared capabilities or those its declaring key covers'
        }`,
      );
    const { reply, newInstance } = await this.o.registry.register(
      this.registerBody(record, body),
      {
        keyId: `endpoint:${agentId}`,
        tenant: record.tenant,
        role: record.shared ? 'operator' : 'agent',
        capabilities: record.key_capabilities,
        open: false,
      },
      { relay: true },
    );
    await this.o.registry.keepCard(agentId, body.card);
    this.log.info(
      {
        agent_id: agentId,
        instance_id: reply.instance_id,
        epoch: reply.epoch,
        tenant: reply.tenant,
        protocol: record.protocol,
        new_instance: newInstance,
        relay_key_id: relay.keyId,
      },
      'endpoint agent registered by its relay',
    );
    this.o.fleet.append({
      kind: newInstance && reply.epoch > 1 ? 'fenced' : 'registered',
      agent_id: reply.agent_id,
      epoch: reply.epoch,
    });
    // The agent can be routed to as soon as the relay has its reply.
    await this.o.onRegistryChange([reply.agent_id]);
    return reply;
  }

  private registerBody(record: EndpointRecord, body: EndpointRegisterBody): RegisterBody {
    return {
      agent_id: record.agent_id,
      instance_id: body.instance_id,
      capabilities: body.capabilities,
      max_concurrency: record.max_concurrency,
      ...(record.region !== undefined ? { region: record.region } : {}),
      ...(record.tags !== undefined ? { tags: record.tags } : {}),
      shared: record.shared,
      meta: {
        ...(record.meta ?? {}),
        endpoint_protocol: record.protocol,
        endpoint_url: record.url,
      },
      ...(body.input_schemas !== undefined ? { input_schemas: body.input_schemas } : {}),
    };
  }
}
