import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CallbackParams, CallbackQuery, CallbacksReply, ErrorReply } from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import type { CallbackReader } from '../../callbacks/callback-reader.ts';
import { callbacksReplyJson } from '../../callbacks/raw-json.ts';
import { isWaitTopic } from '../../callbacks/wait-topic.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';

const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * Reading a callback topic by cursor, with long-polling. A topic is its tenant's: a bare name is
 * the requester's own tenant's topic, another tenant's answers 404 (operators name it
 * `<tenant>/<topic>`), and items name their tasks as the requester does.
 */
export const callbacksRoutes: FastifyPluginAsyncTypebox<{ reader: CallbackReader }> = async (
  app,
  { reader },
) => {
  app.get(
    '/v1/callbacks/:topic',
    {
      schema: {
        params: CallbackParams,
        querystring: CallbackQuery,
        response: { 200: CallbacksReply, 400: ErrorReply, 404: ErrorReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const scope = TenantScope.of(principalOf(request));
      const topic = scope.resolve(request.params.topic);
      if (topic === undefined || (isWaitTopic(topic) && !scope.all)) {
        throw httpError('NOT_FOUND', `topic ${request.params.topic} is unknown`);
      }
      const { after = '0', wait_ms = 0, limit = 100 } = request.query;
      const page = await reader.read(topic, after, wait_ms, limit);
      for (const item of page.items) item.task_id = scope.show(item.task_id);
      // Results go out as the JSON text the topic holds: no parse and serialise per result.
      return reply.type(JSON_UTF8).serializer(callbacksReplyJson).send(page);
    },
  );
};
