import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  AgentAck,
  AgentParams,
  AgentView,
  ErrorReply,
  HeartbeatBody,
  RegisterBody,
  RegisterReply,
} from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import type { AgentRegistry } from '../../registry/agent-registry.ts';
import { parseBearer, type ParsedToken } from '../../registry/token.ts';

/** What the agents routes need. */
export interface AgentsRouteDeps {
  registry: AgentRegistry;
  /** Called after a registration or deregistration so routers learn of it soon. */
  onRegistryChange: () => void;
}

const errors = { 400: ErrorReply, 401: ErrorReply, 404: ErrorReply, 409: ErrorReply, 503: ErrorReply };

function bearer(header: string | undefined): ParsedToken {
  const token = parseBearer(header);
  if (!token) throw httpError('UNAUTHORIZED', 'send Authorization: Bearer <token> with the token from the register reply');
  return token;
}

/** The agents' side of the HTTP API. */
export const agentsRoutes: FastifyPluginAsyncTypebox<AgentsRouteDeps> = async (app, { registry, onRegistryChange }) => {
  app.post(
    '/v1/agents/register',
    { schema: { body: RegisterBody, response: { 200: RegisterReply, ...errors } } },
    async (request) => {
      const { reply, newInstance } = await registry.register(request.body);
      request.log.info(
        { agent_id: reply.agent_id, instance_id: reply.instance_id, epoch: reply.epoch, new_instance: newInstance },
        'agent registered',
      );
      onRegistryChange();
      return reply;
    },
  );

  app.post(
    '/v1/agents/:agent_id/heartbeat',
    { schema: { params: AgentParams, body: HeartbeatBody, response: { 200: AgentAck, ...errors } } },
    async (request) => {
      const ack = await registry.heartbeat(request.params.agent_id, bearer(request.headers.authorization), request.body);
      if (ack.previous !== ack.status) {
        request.log.info({ agent_id: ack.agent_id, from: ack.previous, to: ack.status }, 'agent status changed');
        onRegistryChange();
      }
      return { agent_id: ack.agent_id, epoch: ack.epoch, status: ack.status, lease_ms: ack.lease_ms };
    },
  );

  app.post(
    '/v1/agents/:agent_id/deregister',
    { schema: { params: AgentParams, response: { 200: AgentAck, ...errors } } },
    async (request) => {
      const ack = await registry.deregister(request.params.agent_id, bearer(request.headers.authorization));
      request.log.info({ agent_id: ack.agent_id, epoch: ack.epoch }, 'agent draining');
      onRegistryChange();
      return ack;
    },
  );

  app.get('/v1/agents', { schema: { response: { 200: Type.Object({ agents: Type.Array(AgentView) }) } } }, async () => ({
    agents: await registry.list(),
  }));

  app.get(
    '/v1/agents/:agent_id',
    { schema: { params: AgentParams, response: { 200: AgentView, ...errors } } },
    async (request) => {
      const view = await registry.get(request.params.agent_id);
      if (!view) throw httpError('AGENT_NOT_FOUND', `agent ${request.params.agent_id} is not registered`);
      return view;
    },
  );
};
