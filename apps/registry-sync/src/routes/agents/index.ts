import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  AgentAck,
  AgentParams,
  AgentView,
  ErrorReply,
  HeartbeatBody,
  ObservationReport,
  RegisterReply,
  RegisterRequest,
} from '@agent-reach/protocol';
import { httpError, principalOf, type KeyVerifier } from '@agent-reach/service-kit';
import type { FleetEventLog } from '@agent-reach/dispatch';
import type { AgentRegistry } from '../../registry/agent-registry.ts';
import { parseBearer, type ParsedToken } from '../../registry/token.ts';
import { agentAsSeenBy, seesAgent } from '../../registry/access.ts';
import type { CardFetchSettings } from '../../cards/card-fetcher.ts';
import { readCardRegistration } from '../../cards/card-registration.ts';
import type { ObservationReporter } from '../../observation/observation-report.ts';

/** What the agents routes need. */
export interface AgentsRouteDeps {
  registry: AgentRegistry;
  /** Writes a snapshot so routers learn of a change; awaited before replying to register. */
  /** Publishes these agents to routers now (a registry delta); resolves once written. */
  onRegistryChange: (agentIds: readonly string[]) => Promise<void>;
  /** Where registrations and status changes are announced. */
  fleet: FleetEventLog;
  /** Where a `card_url` may point, and how long and large its fetch may be. */
  cards: CardFetchSettings;
  /** Checks an operator's key on the routes an agent's token also opens (serve). */
  keys: { required: boolean; verifier: KeyVerifier };
  /** Observing agents' reports against their peers; without it, no such route. */
  observations?: ObservationReporter;
}

const ServeBody = Type.Union([
  Type.Object(
    {
      weight: Type.Optional(
        Type.Number({
          minimum: 0.1,
          maximum: 10,
          description: 'Operators only: the routing weight to give the agent (1 is neutral)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

const errors = {
  400: ErrorReply,
  401: ErrorReply,
  403: ErrorReply,
  404: ErrorReply,
  409: ErrorReply,
  502: ErrorReply,
  503: ErrorReply,
};

function bearer(header: string | undefined): ParsedToken {
  const token = parseBearer(header);
  if (!token)
    throw httpError(
      'UNAUTHORIZED',
      'send Authorization: Bearer <token> with the token from the register reply',
    );
  return token;
}

/**
 * The agents' side of the HTTP API. Register takes an API key of role agent or operator (the auth
 * plugin checks it and sets the principal); heartbeat, deregister and serve take the agent's own
 * token from its register reply (`agent-token`: this file checks it), serve an operator's key
 * too; drain takes an operator's key only; the listings take any key and show each key what it
 * may see (docs/SECURITY.md).
 */
export const agentsRoutes: FastifyPluginAsyncTypebox<AgentsRouteDeps> = async (
  app,
  { registry, onRegistryChange, fleet, cards, keys, observations },
) => {
  /**
   * Who calls serve: the agent itself when the bearer is its token, else an operator — any caller
   * while keys are not required (loopback), or the holder of an operator key that sees the agent.
   */
  async function serveCaller(
    agentId: string,
    header: string | undefined,
  ): Promise<ParsedToken | 'operator'> {
    const token = parseBearer(header);
    if (token) return token;
    if (!keys.required) return 'operator';
    const presented = /^Bearer +(\S{1,512})$/i.exec(header?.trim() ?? '')?.[1];
    const principal = presented ? await keys.verifier.verify(presented) : undefined;
    if (!principal)
      throw httpError(
        'UNAUTHORIZED',
        'send Authorization: Bearer <token> with the agent token, or an operator key',
      );
    if (principal.role !== 'operator')
      throw httpError('FORBIDDEN', `a key of role ${principal.role} may not promote an agent`);
    const view = await registry.get(agentId);
    if (!view || !seesAgent(principal, view))
      throw httpError('AGENT_NOT_FOUND', `agent ${agentId} is not registered`);
    return 'operator';
  }

  app.post(
    '/v1/agents/register',
    {
      config: { auth: 'key', roles: ['agent', 'operator'] },
      schema: { body: RegisterRequest, response: { 200: RegisterReply, ...errors } },
    },
    async (request) => {
      // An AgentCard (inline or fetched) supplies capabilities, placement and meta.
      const { body, card } = await readCardRegistration(request.body, cards, request.log);
      const { reply, newInstance } = await registry.register(body, principalOf(request));
      await registry.keepCard(reply.agent_id, card);
      request.log.info(
        {
          agent_id: reply.agent_id,
          instance_id: reply.instance_id,
          epoch: reply.epoch,
          tenant: reply.tenant,
          shared: reply.shared,
          new_instance: newInstance,
          card: card !== undefined,
        },
        'agent registered',
      );
      fleet.append({
        kind: newInstance && reply.epoch > 1 ? 'fenced' : 'registered',
        agent_id: reply.agent_id,
        epoch: reply.epoch,
      });
      // The agent can be routed to as soon as it has its reply.
      await onRegistryChange([reply.agent_id]);
      return reply;
    },
  );

  app.post(
    '/v1/agents/:agent_id/heartbeat',
    // Every agent beats every few seconds: only problems are worth a log line.
    {
      logLevel: 'warn',
      // The agent's own token from its register reply, checked by the registry (no API key).
      config: { auth: 'agent-token' },
      schema: { params: AgentParams, body: HeartbeatBody, response: { 200: AgentAck, ...errors } },
    },
    async (request) => {
      const ack = await registry.heartbeat(
        request.params.agent_id,
        bearer(request.headers.authorization),
        request.body,
      );
      if (ack.previous !== ack.status) {
        request.log.info(
          { agent_id: ack.agent_id, from: ack.previous, to: ack.status },
          'agent status changed',
        );
        fleet.append({
          kind: 'status',
          agent_id: ack.agent_id,
          from: ack.previous,
          to: ack.status,
          reason: 'heartbeat',
        });
        await onRegistryChange([ack.agent_id]);
      }
      if (ack.redis) request.log.info({ agent_id: ack.agent_id }, 'agent redis user made again');
      return {
        agent_id: ack.agent_id,
        epoch: ack.epoch,
        status: ack.status,
        lease_ms: ack.lease_ms,
        ...(ack.redis ? { redis: ack.redis } : {}),
        ...(ack.ack_key ? { ack_key: ack.ack_key } : {}),
      };
    },
  );

  app.post(
    '/v1/agents/:agent_id/deregister',
    {
      config: { auth: 'agent-token' },
      schema: { params: AgentParams, response: { 200: AgentAck, ...errors } },
    },
    async (request) => {
      const ack = await registry.deregister(
        request.params.agent_id,
        bearer(request.headers.authorization),
      );
      request.log.info({ agent_id: ack.agent_id, epoch: ack.epoch }, 'agent draining');
      fleet.append({ kind: 'deregistered', agent_id: ack.agent_id, epoch: ack.epoch });
      await onRegistryChange([ack.agent_id]);
      return ack;
    },
  );

  app.post(
    '/v1/agents/:agent_id/drain',
    {
      // An operator's key: the agent itself deregisters with its token instead.
      config: { roles: ['operator'] },
      schema: { params: AgentParams, response: { 200: AgentAck, ...errors } },
    },
    async (request) => {
      const principal = principalOf(request);
      const agentId = request.params.agent_id;
      const view = await registry.get(agentId);
      if (!view || !seesAgent(principal, view))
        throw httpError('AGENT_NOT_FOUND', `agent ${agentId} is not registered`);
      const { changed, ...ack } = await registry.drain(agentId);
      // Draining already: the same answer, and nothing announced twice.
      if (!changed) return ack;
      request.log.info(
        { agent_id: agentId, epoch: ack.epoch, by: principal.keyId },
        'agent draining at an operator’s request',
      );
      fleet.append({
        kind: 'deregistered',
        agent_id: agentId,
        epoch: ack.epoch,
        reason: 'operator',
      });
      await onRegistryChange([agentId]);
      return ack;
    },
  );

  app.post(
    '/v1/agents/:agent_id/serve',
    {
      // The agent's token, or an operator's key: checked by serveCaller.
      config: { auth: 'agent-token' },
      schema: {
        params: AgentParams,
        body: Type.Optional(ServeBody),
        response: { 200: AgentView, ...errors },
      },
    },
    async (request) => {
      const by = await serveCaller(request.params.agent_id, request.headers.authorization);
      const weight = request.body?.weight;
      if (weight !== undefined && by !== 'operator')
        throw httpError('FORBIDDEN', 'only an operator key may set an agent’s weight');
      await registry.serve(request.params.agent_id, by, weight);
      request.log.info(
        { agent_id: request.params.agent_id, by: by === 'operator' ? 'operator' : 'agent', weight },
        'agent switched from observing to serving',
      );
      fleet.append({ kind: 'status', agent_id: request.params.agent_id, reason: 'serve' });
      await onRegistryChange([request.params.agent_id]);
      const view = await registry.get(request.params.agent_id);
      if (!view)
        throw httpError('AGENT_NOT_FOUND', `agent ${request.params.agent_id} is not registered`);
      return view;
    },
  );

  app.get(
    '/v1/agents',
    { schema: { response: { 200: Type.Object({ agents: Type.Array(AgentView) }) } } },
    async (request) => {
      const principal = principalOf(request);
      const views = await registry.list();
      return {
        agents: views
          .filter((v) => seesAgent(principal, v))
          .map((v) => agentAsSeenBy(principal, v)),
      };
    },
  );

  app.get(
    '/v1/agents/:agent_id',
    { schema: { params: AgentParams, response: { 200: AgentView, ...errors } } },
    async (request) => {
      const principal = principalOf(request);
      const view = await registry.get(request.params.agent_id);
      // Another tenant's agent is answered like one that does not exist.
      if (!view || !seesAgent(principal, view))
        throw httpError('AGENT_NOT_FOUND', `agent ${request.params.agent_id} is not registered`);
      return agentAsSeenBy(principal, view);
    },
  );

  if (observations)
    app.get(
      '/v1/agents/:agent_id/observation',
      {
        config: { roles: ['operator'] },
        schema: { params: AgentParams, response: { 200: ObservationReport, ...errors } },
      },
      async (request) => {
        const principal = principalOf(request);
        const view = await registry.get(request.params.agent_id);
        if (!view || !seesAgent(principal, view))
          throw httpError('AGENT_NOT_FOUND', `agent ${request.params.agent_id} is not registered`);
        return observations.report(view);
      },
    );

  app.get(
    '/v1/agents/:agent_id/card',
    {
      schema: {
        params: AgentParams,
        response: { 200: Type.Record(Type.String(), Type.Unknown()), ...errors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const view = await registry.get(request.params.agent_id);
      // The same visibility as GET /v1/agents/:agent_id: another tenant's agent does not exist.
      if (!view || !seesAgent(principal, view))
        throw httpError('AGENT_NOT_FOUND', `agent ${request.params.agent_id} is not registered`);
      const card = await registry.card(request.params.agent_id);
      if (card === undefined)
        throw httpError(
          'CARD_NOT_FOUND',
          `agent ${request.params.agent_id} registered without an AgentCard`,
        );
      return JSON.parse(card) as Record<string, unknown>;
    },
  );
};
