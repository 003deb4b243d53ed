import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AgentAck, AgentParams, AgentView, ErrorReply } from '@agent-reach/protocol';
import { SESSION_COOKIE } from '@agent-reach/service-kit';
import type { RegistryForwarder } from '../../agents/registry-forwarder.ts';

const tags = ['agents'];
const operatorOnly = { roles: ['operator'] as const };
const errors = {
  400: ErrorReply,
  401: ErrorReply,
  403: ErrorReply,
  404: ErrorReply,
  409: ErrorReply,
  429: ErrorReply,
  502: ErrorReply,
  503: ErrorReply,
};

/** The serve body registry-sync takes; it checks the weight's bounds itself. */
const ServeBody = Type.Union([
  Type.Object({
    weight: Type.Optional(
      Type.Number({ description: 'The routing weight to give the agent, 0.1–10 (1 is neutral)' }),
    ),
  }),
  Type.Null(),
]);

/**
 * The key the auth hook verified: the bearer header, else the console's session cookie (a write
 * only gets this far with the console's header beside it). Undefined while auth is off and none
 * was sent.
 */
function verifiedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') return /^Bearer +(\S+)$/i.exec(header.trim())?.[1];
  return request.cookies[SESSION_COOKIE] || undefined;
}

/**
 * The operators' agent calls that registry-sync answers (it alone writes registry state), taken
 * here too so that the console, served by the router, can make them: each is sent on to
 * registry-sync (REACH_REGISTRY_URL) with the caller's key, and its status and body come back
 * as they are.
 */
export const agentsRoutes: FastifyPluginAsyncTypebox<{ registry: RegistryForwarder }> = async (
  app,
  { registry },
) => {
  app.post(
    '/v1/agents/:agent_id/drain',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Drain an agent: no new tasks, those in flight finish, then it is removed',
        description: "Forwarded to registry-sync's route of the same path with the caller's key.",
        params: AgentParams,
        response: { 200: AgentAck, ...errors },
      },
    },
    async (request, reply) => {
      const path = `/v1/agents/${encodeURIComponent(request.params.agent_id)}/drain`;
      const res = await registry.post(path, verifiedKey(request), undefined);
      // registry-sync's reply to the same route, checked as JSON there: serialised by its status.
      return reply.code(res.status).send(res.body as AgentAck);
    },
  );

  app.post(
    '/v1/agents/:agent_id/serve',
    {
      config: operatorOnly,
      schema: {
        tags,
        summary: 'Switch an observing agent to serving, optionally setting its routing weight',
        description: "Forwarded to registry-sync's route of the same path with the caller's key.",
        params: AgentParams,
        body: Type.Optional(ServeBody),
        response: { 200: AgentView, ...errors },
      },
    },
    async (request, reply) => {
      const path = `/v1/agents/${encodeURIComponent(request.params.agent_id)}/serve`;
      const res = await registry.post(path, verifiedKey(request), request.body ?? undefined);
      return reply.code(res.status).send(res.body as AgentView);
    },
  );
};
