import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ConsoleLoginBody,
  ConsoleLoginReply,
  ErrorReply,
  type ConsoleLoginReply as LoginReply,
} from '@agent-reach/protocol';
import {
  httpError,
  principalOf,
  refuseLimitedAddress,
  SESSION_COOKIE,
  type KeyVerifier,
  type Principal,
} from '@agent-reach/service-kit';

const tags = ['console'];
/** A console session lasts a working day; the key itself may expire sooner. */
const SESSION_MAX_AGE_S = 12 * 3600;

function who(p: Principal): LoginReply {
  return { key_id: p.keyId, tenant: p.tenant, role: p.role };
}

/**
 * The console's login (docs/SECURITY.md): a POST with a key sets it as an HttpOnly,
 * SameSite=Strict cookie, which the console page, its event stream and the reads it makes send
 * instead of a bearer header. Operators' and callers' keys only.
 */
export const consoleSessionRoutes: FastifyPluginAsyncTypebox<{ verifier: KeyVerifier }> = async (
  app,
  { verifier },
) => {
  app.post(
    '/v1/console/login',
    {
      // Checks the key itself: a wrong one is a 401 like anywhere else.
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Log the console in with an API key: sets the session cookie (HttpOnly)',
        body: ConsoleLoginBody,
        response: {
          200: ConsoleLoginReply,
          400: ErrorReply,
          401: ErrorReply,
          403: ErrorReply,
          429: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      // A key in the body is a guess like any other: an address over its limit is refused first.
      refuseLimitedAddress(request, reply);
      const principal = await verifier.verify(request.body.key);
      if (!principal) {
        throw httpError('UNAUTHORIZED', 'the API key is not valid (unknown, revoked or expired)');
      }
      if (principal.role === 'agent') {
        throw httpError(
          'FORBIDDEN',
          'the console takes an operator or caller key, not an agent key',
        );
      }
      request.log.info({ key_id: principal.keyId, tenant: principal.tenant }, 'console login');
      return reply
        .setCookie(SESSION_COOKIE, request.body.key, {
          path: '/',
          httpOnly: true,
          sameSite: 'strict',
          secure: request.protocol === 'https',
          maxAge: SESSION_MAX_AGE_S,
        })
        .send(who(principal));
    },
  );

  app.post(
    '/v1/console/logout',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Log the console out: clears the session cookie',
        response: { 204: { type: 'null', description: 'Logged out' } },
      },
    },
    async (_request, reply) =>
      reply
        .clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict' })
        .code(204)
        .send(),
  );

  app.get(
    '/v1/console/session',
    {
      config: { roles: ['operator', 'caller'] },
      schema: {
        tags,
        summary: 'Who the console acts as: the key id, tenant and role of its session',
        response: { 200: ConsoleLoginReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => who(principalOf(request)),
  );
};
