import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import {
  ErrorReply,
  SubmitBatchBody,
  SubmitBatchReply,
  SubmitBody,
  SubmitQuery,
  SubmitReply,
  TaskParams,
  TaskView,
  type SubmitBatchItem,
} from '@agent-reach/protocol';
import {
  bindRequestLog,
  describeError,
  httpError,
  isRedisUnavailable,
  resolveTraceId,
} from '@agent-reach/service-kit';
import type { ResultWaiter } from '../../callbacks/result-waiter.ts';
import type { Submitter, SubmitOutcome } from '../../submit/submitter.ts';
import type { TaskReader } from '../../tasks/task-reader.ts';
import { withResult } from './waited-reply.ts';
import { submitReplyJson } from '../../callbacks/raw-json.ts';

const JSON_UTF8 = 'application/json; charset=utf-8';

/** What the task routes need. */
export interface TasksRouteDeps {
  submitter: Submitter;
  tasks: TaskReader;
  waiter: ResultWaiter;
  /** Body limit of a batch submission, bytes. */
  batchBodyLimit: number;
}

const errors = { 400: ErrorReply, 404: ErrorReply, 413: ErrorReply, 503: ErrorReply };
/** A submission's error replies; from a 429 or 5xx the caller retries with the reply's task_id. */
const submitErrors = { ...errors, 429: ErrorReply, 500: ErrorReply };

/** Submitting tasks (one, with or without waiting for the result, or many at once) and reading their state. */
export const tasksRoutes: FastifyPluginAsyncTypebox<TasksRouteDeps> = async (
  app,
  { submitter, tasks, waiter, batchBodyLimit },
) => {
  app.post(
    '/v1/tasks',
    {
      schema: {
        querystring: SubmitQuery,
        body: SubmitBody,
        response: { 200: SubmitReply, 202: SubmitReply, ...submitErrors },
      },
    },
    async (request, reply) => {
      // The task_id is fixed before anything can fail and every error reply carries it: a
      // submission answered 429 or 5xx may have reached Redis all the same, and a retry with
      // this task_id is then answered 200 with that task instead of running it twice.
      const taskId = request.body.task_id ?? randomUUID();
      request.errorTaskId = taskId;
      // The trace id follows the task (stream entry, acks, events) and this request's logs.
      const traceId = resolveTraceId(request.body.trace_id, request.headers.traceparent);
      bindRequestLog(request, reply, { trace_id: traceId, task_id: taskId });
      const waitMs = request.query.wait_ms ?? 0;
      if (waitMs > 0 && request.body.callback_topic !== undefined) {
        throw httpError(
          'INVALID_QUERY',
          'wait_ms answers with the result itself: leave callback_topic out, or read the topic instead of waiting',
        );
      }
      if (waitMs === 0) {
        const outcome = await submitter.submit({
          ...request.body,
          task_id: taskId,
          trace_id: traceId,
        });
        return reply.code(outcome.created ? 202 : 200).send(outcome.reply);
      }
      // Registered before the submission, so the result cannot arrive unseen.
      const expectation = waiter.expect(taskId, waitMs);
      let outcome: SubmitOutcome;
      try {
        outcome = await submitter.submit({
          ...request.body,
          task_id: taskId,
          trace_id: traceId,
          callback_topic: waiter.topic,
        });
      } catch (err: unknown) {
        expectation.cancel();
        throw err;
      }
      if (!outcome.created) {
        // A repeated task_id: its result goes where the first submission said; answer what is known.
        expectation.cancel();
        return reply.code(200).send(outcome.reply);
      }
      const msg = await expectation.result;
      // The result goes out as the JSON text its callback entry holds (submitReplyJson).
      return msg
        ? reply
            .code(200)
            .type(JSON_UTF8)
            .serializer(submitReplyJson)
            .send(withResult(outcome.reply, msg))
        : reply.code(202).send(outcome.reply);
    },
  );

  app.post(
    '/v1/tasks/batch',
    {
      bodyLimit: batchBodyLimit,
      schema: { body: SubmitBatchBody, response: { 200: SubmitBatchReply, ...errors } },
    },
    async (request) => {
      // Submitted concurrently: their Redis commands share round trips on the auto-pipelined connection.
      const results = await Promise.all(
        request.body.tasks.map(async (task): Promise<SubmitBatchItem> => {
          // As for one submission: a refused item names the task_id to retry it with.
          const taskId = task.task_id ?? randomUUID();
          try {
            const outcome = await submitter.submit({
              ...task,
              task_id: taskId,
              trace_id: resolveTraceId(task.trace_id, request.headers.traceparent),
            });
            return { http_status: outcome.created ? 202 : 200, ...outcome.reply };
          } catch (err: unknown) {
            const described = describeError(err as FastifyError, isRedisUnavailable);
            if (described.status >= 500 && described.code === 'INTERNAL')
              request.log.error({ err, task_id: taskId }, 'batch item failed');
            return {
              http_status: described.status,
              task_id: taskId,
              error: described.code,
              message: described.message,
            };
          }
        }),
      );
      return { results };
    },
  );

  app.get(
    '/v1/tasks/:task_id',
    { schema: { params: TaskParams, response: { 200: TaskView, ...errors } } },
    async (request) => {
      const view = await tasks.view(request.params.task_id);
      if (!view)
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${request.params.task_id} is unknown or has expired`,
        );
      return view;
    },
  );
};
