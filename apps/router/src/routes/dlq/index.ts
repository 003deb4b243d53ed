import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DlqQuery, DlqReply, ErrorReply, ReplayReply, TaskParams } from '@agent-reach/protocol';
import type { DeadLetters } from '../../dlq/dead-letters.ts';

/** The dead-letter queue: list, and replay one as a fresh attempt. */
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
      items: await deadLetters.list(request.query.capability, request.query.limit ?? 100),
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
      const replayed = await deadLetters.replay(request.params.task_id);
      request.log.info(
        { task_id: replayed.task_id, attempt: replayed.attempt },
        'dead letter replayed',
      );
      return reply.code(202).send(replayed);
    },
  );
};
