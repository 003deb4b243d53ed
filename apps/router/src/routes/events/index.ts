import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorReply,
  EVENT_CURSOR_PATTERN,
  parseEventCursor,
  START_CURSOR,
  TaskParams,
  type TaskEventCursor,
} from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import type { TaskEventsFeed } from '../../tasks/task-events-feed.ts';
import type { TaskEventsReader } from '../../tasks/task-events.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';

/** What the task events route needs. */
export interface EventsRouteDeps {
  reader: TaskEventsReader;
  feed: TaskEventsFeed;
}

const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: EVENT_CURSOR_PATTERN,
      description: 'Resume after this event: the `id:` of the last event received',
    }),
  ),
});

const DESCRIPTION = `A text/event-stream of the task's events in order: \`stage\` (each stage of its timeline, as GET /v1/tasks/:task_id shows it), \`progress\` ({at, attempt, progress}), \`chunk\` ({at, attempt, chunk}) and \`truncated\` ({at, attempt, chunks, bytes}: the output reached its bound). Each event's \`id:\` resumes the stream after it (Last-Event-ID). The stream ends after the final stage (completed, dead or cancelled); a finished task's stream replays its events and ends.`;

/** `GET /v1/tasks/:task_id/events`: a task's stages, progress and output as server-sent events. */
export const eventsRoutes: FastifyPluginAsyncTypebox<EventsRouteDeps> = async (
  app,
  { reader, feed },
) => {
  app.get(
    '/v1/tasks/:task_id/events',
    {
      schema: {
        summary: "A task's stages, progress and output chunks as server-sent events",
        description: DESCRIPTION,
        produces: ['text/event-stream'],
        params: TaskParams,
        headers: EventsHeaders,
        response: {
          200: Type.String({ description: 'text/event-stream' }),
          400: ErrorReply,
          404: ErrorReply,
          503: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      // Another tenant's task is unknown here, as for GET /v1/tasks/:task_id (404, not 403).
      const scope = TenantScope.of(principalOf(request));
      const id = scope.resolve(request.params.task_id);
      const lastEventId = request.headers['last-event-id'];
      const cursor: TaskEventCursor =
        (lastEventId === undefined ? undefined : parseEventCursor(lastEventId)) ?? START_CURSOR;
      const show = (taskId: string) => scope.show(taskId);
      // Read once before the stream starts, so an unknown task is an ordinary 404.
      const first = id === undefined ? undefined : await reader.read(id, cursor, show);
      if (id === undefined || first === undefined)
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${request.params.task_id} is unknown or has expired`,
        );
      reply.hijack();
      await feed.follow(reply.raw, id, first, show);
    },
  );
};
