import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorReply, SubmitBody, SubmitReply, TaskParams, TaskView } from '@agent-reach/protocol';
import { bindRequestLog, httpError, resolveTraceId } from '@agent-reach/service-kit';
import type { Dispatcher } from '../../dispatch/dispatcher.ts';
import type { TaskReader } from '../../tasks/task-reader.ts';

/** What the task routes need. */
export interface TasksRouteDeps {
  dispatcher: Dispatcher;
  tasks: TaskReader;
}

const errors = { 400: ErrorReply, 404: ErrorReply, 413: ErrorReply, 503: ErrorReply };

/** Submitting tasks and reading their state. */
export const tasksRoutes: FastifyPluginAsyncTypebox<TasksRouteDeps> = async (app, { dispatcher, tasks }) => {
  app.post(
    '/v1/tasks',
    { schema: { body: SubmitBody, response: { 200: SubmitReply, 202: SubmitReply, ...errors } } },
    async (request, reply) => {
      // The trace id follows the task (stream entry, acks, events) and this request's logs.
      const traceId = resolveTraceId(request.body.trace_id, request.headers.traceparent);
      bindRequestLog(request, reply, { trace_id: traceId, task_id: request.body.task_id });
      const outcome = await dispatcher.submit({ ...request.body, trace_id: traceId });
      if (!request.body.task_id) bindRequestLog(request, reply, { task_id: outcome.reply.task_id });
      return reply.code(outcome.created ? 202 : 200).send(outcome.reply);
    },
  );

  app.get(
    '/v1/tasks/:task_id',
    { schema: { params: TaskParams, response: { 200: TaskView, ...errors } } },
    async (request) => {
      const view = await tasks.view(request.params.task_id);
      if (!view) throw httpError('TASK_NOT_FOUND', `task ${request.params.task_id} is unknown or has expired`);
      return view;
    },
  );
};
