import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CallbackParams, CallbackQuery, CallbacksReply, ErrorReply } from '@agent-reach/protocol';
import type { CallbackReader } from '../../callbacks/callback-reader.ts';
import { callbacksReplyJson } from '../../callbacks/raw-json.ts';

const JSON_UTF8 = 'application/json; charset=utf-8';

/** Reading a callback topic by cursor, with long-polling. */
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
        response: { 200: CallbacksReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const { after = '0', wait_ms = 0, limit = 100 } = request.query;
      const page = await reader.read(request.params.topic, after, wait_ms, limit);
      // Results go out as the JSON text the topic holds: no parse and serialise per result.
      return reply.type(JSON_UTF8).serializer(callbacksReplyJson).send(page);
    },
  );
};
