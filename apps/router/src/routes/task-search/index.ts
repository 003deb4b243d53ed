import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorReply, TaskSearchQuery, TaskSearchReply } from '@agent-reach/protocol';
import { principalOf } from '@agent-reach/service-kit';
import { eventsUnavailable } from '../../observability/events-reader.ts';
import type { TaskSearch } from '../../search/task-search.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';

/**
 * `GET /v1/tasks`: the requester's tasks that match the query's filters, newest first, a page at
 * a time (docs/PROTOCOL.md, Task search). An archive that does not answer is 503
 * `EVENTS_UNAVAILABLE`, not a page that silently lacks it.
 */
export const taskSearchRoutes: FastifyPluginAsyncTypebox<{ search: TaskSearch }> = async (
  app,
  { search },
) => {
  app.get(
    '/v1/tasks',
    {
      schema: {
        querystring: TaskSearchQuery,
        response: { 200: TaskSearchReply, 400: ErrorReply, 403: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      try {
        return await search.search(request.query, TenantScope.of(principalOf(request)));
      } catch (err: unknown) {
        throw eventsUnavailable(err, request.log);
      }
    },
  );
};
