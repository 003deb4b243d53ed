import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorReply, RedisCredentials, RelayParams } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import type { RelayAcl } from '../../acl/relay-acl.ts';

/** What the relays routes need. */
export interface RelaysRouteDeps {
  /** Relays' Redis users; undefined while REACH_AGENT_ACL is off. */
  acl: RelayAcl | undefined;
}

/**
 * A relay's Redis user (`REACH_AGENT_ACL=on`, docs/ENDPOINTS.md, Identity): a relay key (or an
 * operator's) gets credentials that reach the declared endpoint agents' inboxes and control
 * streams, the acks streams write-only, and nothing else. Asking again issues a new password.
 */
export const relaysRoutes: FastifyPluginAsyncTypebox<RelaysRouteDeps> = async (app, { acl }) => {
  app.post(
    '/v1/relays/:relay_id/redis',
    {
      config: { roles: ['relay', 'operator'] },
      schema: {
        params: RelayParams,
        response: { 200: RedisCredentials, 401: ErrorReply, 403: ErrorReply, 409: ErrorReply },
      },
    },
    async (request) => {
      if (!acl)
        throw httpError(
          'ACL_NOT_ENABLED',
          'registry-sync runs without REACH_AGENT_ACL=on: it makes no Redis users; give the relay a Redis user of your own',
        );
      const credentials = await acl.issue(request.params.relay_id);
      request.log.info({ relay_id: request.params.relay_id }, 'relay redis user issued');
      return credentials;
    },
  );
};
