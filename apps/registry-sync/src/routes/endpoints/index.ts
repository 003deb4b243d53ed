import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  AgentParams,
  EndpointBody,
  EndpointRegisterBody,
  EndpointView,
  ErrorReply,
  RegisterReply,
} from '@agent-reach/protocol';
import { principalOf } from '@agent-reach/service-kit';
import type { EndpointDeclarations } from '../../endpoints/endpoint-declarations.ts';
import type { EndpointRegistration } from '../../endpoints/endpoint-registration.ts';

/** What the endpoints routes need. */
export interface EndpointsRouteDeps {
  declarations: EndpointDeclarations;
  registration: EndpointRegistration;
}

const errors = {
  400: ErrorReply,
  401: ErrorReply,
  403: ErrorReply,
  404: ErrorReply,
  409: ErrorReply,
  503: ErrorReply,
};

/** Keys that may declare and remove endpoint agents. */
const declarers = { roles: ['agent', 'operator'] as const };

/**
 * Endpoint agents (docs/ENDPOINTS.md): agents declared by URL, which a relay registers and
 * calls. Agent and operator keys declare them in their tenant; any key but a relay's lists its
 * tenant's; a relay (or an operator) registers the one it serves. The rules are in
 * endpoints/; bodies are never logged (they carry secrets).
 */
export const endpointsRoutes: FastifyPluginAsyncTypebox<EndpointsRouteDeps> = async (
  app,
  { declarations, registration },
) => {
  app.put(
    '/v1/endpoints/:agent_id',
    {
      config: declarers,
      schema: {
        params: AgentParams,
        body: EndpointBody,
        response: { 200: EndpointView, ...errors },
      },
    },
    async (request) =>
      declarations.declare(request.params.agent_id, request.body, principalOf(request)),
  );

  app.get(
    '/v1/endpoints',
    { schema: { response: { 200: Type.Object({ endpoints: Type.Array(EndpointView) }) } } },
    async (request) => ({ endpoints: await declarations.list(principalOf(request)) }),
  );

  app.get(
    '/v1/endpoints/:agent_id',
    { schema: { params: AgentParams, response: { 200: EndpointView, ...errors } } },
    async (request) => declarations.get(request.params.agent_id, principalOf(request)),
  );

  app.delete(
    '/v1/endpoints/:agent_id',
    {
      config: declarers,
      schema: {
        params: AgentParams,
        response: { 204: { type: 'null', description: 'Removed' }, ...errors },
      },
    },
    async (request, reply) => {
      await declarations.remove(request.params.agent_id, principalOf(request));
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/endpoints/:agent_id/register',
    {
      config: { roles: ['relay', 'operator'] },
      schema: {
        params: AgentParams,
        body: EndpointRegisterBody,
        response: { 200: RegisterReply, ...errors },
      },
    },
    async (request) =>
      registration.register(request.params.agent_id, request.body, principalOf(request)),
  );
};
