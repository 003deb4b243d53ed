import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorReply,
  TenantParams,
  WebhookDeliveryParams,
  WebhookFailuresQuery,
  WebhookFailuresReply,
  WebhookResendReply,
  WebhookSecretReply,
} from '@agent-reach/protocol';
import { principalOf } from '@agent-reach/service-kit';
import { TenantScope } from '../../tasks/tenant-scope.ts';
import type { WebhookFailures } from '../../webhooks/webhook-failures.ts';
import type { WebhookSecrets } from '../../webhooks/webhook-secrets.ts';

/** What the webhook routes need. */
export interface WebhooksRouteDeps {
  failures: WebhookFailures;
  secrets: WebhookSecrets;
}

const tags = ['webhooks'];

/**
 * Webhook callbacks (docs/PROTOCOL.md, Webhook callbacks): the deliveries that gave up, which a
 * tenant sees and re-sends for its own tasks (operators for every tenant's; another tenant's is
 * 404), and the tenants' signing secrets, which operators make and rotate.
 */
export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhooksRouteDeps> = async (
  app,
  { failures, secrets },
) => {
  app.get(
    '/v1/webhooks/failures',
    {
      schema: {
        tags,
        summary: 'Webhook deliveries that gave up after their last try, newest first',
        querystring: WebhookFailuresQuery,
        response: { 200: WebhookFailuresReply, 400: ErrorReply, 401: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) =>
      failures.list(
        TenantScope.of(principalOf(request)),
        request.query.limit ?? 100,
        request.query.cursor,
      ),
  );

  app.post(
    '/v1/webhooks/failures/:id/resend',
    {
      schema: {
        tags,
        summary:
          'Try a given-up delivery again from the start of the retry schedule, same webhook-id',
        params: WebhookDeliveryParams,
        response: {
          202: WebhookResendReply,
          400: ErrorReply,
          401: ErrorReply,
          404: ErrorReply,
          503: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      await failures.resend(TenantScope.of(principalOf(request)), request.params.id);
      request.log.info({ webhook_id: request.params.id }, 'webhook delivery re-sent');
      return reply.code(202).send({ id: request.params.id, status: 'pending' as const });
    },
  );

  app.post(
    '/v1/tenants/:tenant/webhook-secret',
    {
      config: { roles: ['operator'] as const },
      schema: {
        tags: ['tenants', ...tags],
        summary:
          "Make or rotate a tenant's webhook signing secret (shown this once); the previous one signs too through the grace period",
        params: TenantParams,
        response: { 200: WebhookSecretReply, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply },
      },
    },
    async (request) => {
      const { tenant } = request.params;
      const made = await secrets.rotate(tenant);
      request.log.info(
        { tenant, by: request.principal?.keyId, previous_valid_until: made.previous_valid_until },
        'webhook secret rotated',
      );
      return made;
    },
  );
};
