import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DlqQuery, DlqReply, ErrorReply, ReplayReply, TaskParams } from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import type { DeadLetters } from '../../dlq/dead-letters.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';

/**
 * The dead-letter queue: list, and replay one as a fresh attempt. A requester sees and replays
 * its own tenant's dead letters (operators every tenant's, named `<tenant>/<task_id>`); another
 * tenant's answers 404.
 */
export const dlqRoutes: FastifyPluginAsyncTypebox<{ deadLetters: DeadLetters }> = async (
  app,
  { deadLetters },
) => {
  app.get(
    '/v1/dlq',
    {
      schema: {
        querystring: DlqQuery,
        response: { 200: DlqReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => ({
      items: await deadLetters.list(
        TenantScope.of(principalOf(request)),
        request.query.capability,
        request.query.limit ?? 100,
      ),
    }),
  );

  app.post(
    '/v1/dlq/:task_id/replay',
    {
      schema: {
        params: TaskParams,
        response: {
          202: ReplayReply,
          400: ErrorReply,
          404: ErrorReply,
          409: ErrorReply,
          503: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      const scope = TenantScope.of(principalOf(request));
      const id = scope.resolve(request.params.task_id);
      if (id === undefined)
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${request.params.task_id} is unknown or has expired`,
        );
      const replayed = await deadLetters.replay(id);
      request.log.info(
        { task_id: replayed.task_id, attempt: replayed.attempt },
        'dead letter replayed',
      );
      return reply.code(202).send({ ...replayed, task_id: scope.show(replayed.task_id) });
    },
  );
};
