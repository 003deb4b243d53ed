import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import {
  ErrorReply,
  jsonDepthExceeds,
  MAX_BODY_JSON_DEPTH,
  MAX_JSON_DEPTH,
  SubmitBatchBody,
  SubmitBatchReply,
  SubmitBody,
  SubmitQuery,
  SubmitReply,
  TaskParams,
  TaskViewQuery,
  TaskView,
  type SubmitBatchItem,
} from '@agent-reach/protocol';
import {
  bindRequestLog,
  describeError,
  httpError,
  isRedisUnavailable,
  mayUseCapability,
  principalOf,
  resolveTraceId,
  type Principal,
} from '@agent-reach/service-kit';
import type { ResultWaiter } from '../../callbacks/result-waiter.ts';
import type { Submitter, SubmitOutcome } from '../../submit/submitter.ts';
import type { TaskReader } from '../../tasks/task-reader.ts';
import { withResult } from './waited-reply.ts';
import { submitReplyJson } from '../../callbacks/raw-json.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';
import { eventsUnavailable } from '../../observability/events-reader.ts';
import type { InflightQuota } from '../../quotas/inflight-quota.ts';

const JSON_UTF8 = 'application/json; charset=utf-8';

/** What the task routes need. */
export interface TasksRouteDeps {
  submitter: Submitter;
  tasks: TaskReader;
  waiter: ResultWaiter;
  /** Body limit of a batch submission, bytes. */
  batchBodyLimit: number;
  /** Tasks in flight per key; without it, none is counted. */
  quota?: InflightQuota;
}

const errors = { 400: ErrorReply, 404: ErrorReply, 413: ErrorReply, 503: ErrorReply };

/**
 * The body as the submitter takes it: the ids scoped to the submitting key's tenant. A key
 * limited to capabilities submits only to those, fallbacks included (403), and a parent task the key cannot see
 * names nothing (404).
 */
function scopedBody<T extends SubmitBody>(
  principal: Principal,
  scope: TenantScope,
  body: T,
  taskId: string,
): T {
  // A fallback is a capability the task may run on: the key must be allowed each one it names.
  for (const capability of [body.capability, ...(body.fallback_capabilities ?? [])]) {
    if (!mayUseCapability(principal, capability)) {
      throw httpError('FORBIDDEN', `this key may not submit to capability ${capability}`);
    }
  }
  let parent: string | undefined;
  if (body.parent_task_id !== undefined) {
    parent = scope.resolve(body.parent_task_id);
    if (parent === undefined)
      throw httpError('TASK_NOT_FOUND', `parent task ${body.parent_task_id} is unknown`);
  }
  return {
    ...body,
    task_id: scope.own(taskId),
    ...(body.callback_topic !== undefined
      ? { callback_topic: scope.own(body.callback_topic) }
      : {}),
    ...(parent !== undefined ? { parent_task_id: parent } : {}),
  };
}

/** A submit reply with the task_id as the requester names it. */
function shown<R extends { task_id: string }>(scope: TenantScope, reply: R): R {
  const taskId = scope.show(reply.task_id);
  // The default tenant's ids are bare already: no copy on an open deployment's hot path.
  return taskId === reply.task_id ? reply : { ...reply, task_id: taskId };
}

/**
 * A submission's error replies; from a 429 or 5xx the caller retries with the reply's task_id.
 * A 409 is a child whose parent has too little time left (PARENT_DEADLINE_NEAR).
 */
const submitErrors = { ...errors, 409: ErrorReply, 429: ErrorReply, 500: ErrorReply };

/** Submitting tasks (one, with or without waiting for the result, or many at once) and reading their state. */
export const tasksRoutes: FastifyPluginAsyncTypebox<TasksRouteDeps> = async (
  app,
  { submitter, tasks, waiter, batchBodyLimit, quota },
) => {
  /**
   * Submits within the key's in-flight quota: the slot is taken before the submission and given
   * back when no new task came of it (refused, or a repeated task_id).
   */
  const submitWithin = async (
    principal: Principal,
    body: SubmitBody,
    tenant: string,
    traceparent?: string | string[],
  ): Promise<SubmitOutcome> => {
    // While auth is off nothing is counted: no slot, not even a promise to wait for.
    const slot =
      quota && !principal.open ? await quota.take(principal, body.task_id ?? '') : undefined;
    let outcome: SubmitOutcome;
    try {
      outcome = await submitter.submit(
        body,
        tenant,
        typeof traceparent === 'string' ? traceparent : undefined,
      );
    } catch (err: unknown) {
      await slot?.release();
      throw err;
    }
    if (!outcome.created || outcome.reply.status === 'dead') await slot?.release();
    return outcome;
  };

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
      const principal = principalOf(request);
      const scope = TenantScope.of(principal);
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
      const body = scopedBody(principal, scope, { ...request.body, trace_id: traceId }, taskId);
      if (waitMs === 0) {
        const outcome = await submitWithin(
          principal,
          body,
          scope.tenant,
          request.headers.traceparent,
        );
        return reply.code(outcome.created ? 202 : 200).send(shown(scope, outcome.reply));
      }
      // Registered before the submission, so the result cannot arrive unseen. The router's own
      // wait topic is not scoped: its results come back here, never to a caller's read.
      const expectation = waiter.expect(body.task_id as string, waitMs);
      let outcome: SubmitOutcome;
      try {
        outcome = await submitWithin(
          principal,
          // Nobody reads the wait topic's progress and chunks: a waited task's go to its events only.
          { ...body, callback_topic: waiter.topic, stream: false },
          scope.tenant,
          request.headers.traceparent,
        );
      } catch (err: unknown) {
        expectation.cancel();
        throw err;
      }
      if (!outcome.created) {
        // A repeated task_id: its result goes where the first submission said; answer what is known.
        expectation.cancel();
        return reply.code(200).send(shown(scope, outcome.reply));
      }
      const msg = await expectation.result;
      // The result goes out as the JSON text its callback entry holds (submitReplyJson).
      return msg
        ? reply
            .code(200)
            .type(JSON_UTF8)
            .serializer(submitReplyJson)
            .send(shown(scope, withResult(outcome.reply, msg)))
        : reply.code(202).send(shown(scope, outcome.reply));
    },
  );

  app.post(
    '/v1/tasks/batch',
    {
      bodyLimit: batchBodyLimit,
      // A payload too deep is its own item's 400 (Submitter); only a body past this is refused whole.
      config: { maxJsonDepth: MAX_BODY_JSON_DEPTH },
      schema: { body: SubmitBatchBody, response: { 200: SubmitBatchReply, ...errors } },
    },
    async (request) => {
      const principal = principalOf(request);
      const scope = TenantScope.of(principal);
      // The body, `tasks` and an item wrap each payload: only a deeper body can hold one too deep.
      const mayBeTooDeep = request.jsonBodyDepth > MAX_JSON_DEPTH + 3;
      // Submitted concurrently: their Redis commands are in flight together, and the claims and
      // deliveries of one turn go out as one script call or pipeline per shard.
      const results = await Promise.all(
        request.body.tasks.map(async (task): Promise<SubmitBatchItem> => {
          // As for one submission: a refused item names the task_id to retry it with.
          const taskId = task.task_id ?? randomUUID();
          try {
            if (mayBeTooDeep && jsonDepthExceeds(task.payload, MAX_JSON_DEPTH))
              throw httpError(
                'JSON_TOO_DEEP',
                `payload nests deeper than ${MAX_JSON_DEPTH} levels`,
              );
            const body = scopedBody(
              principal,
              scope,
              { ...task, trace_id: resolveTraceId(task.trace_id, request.headers.traceparent) },
              taskId,
            );
            const outcome = await submitWithin(
              principal,
              body,
              scope.tenant,
              request.headers.traceparent,
            );
            return { http_status: outcome.created ? 202 : 200, ...shown(scope, outcome.reply) };
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
    {
      schema: {
        params: TaskParams,
        querystring: TaskViewQuery,
        response: { 200: TaskView, ...errors },
      },
    },
    async (request) => {
      // Another tenant's task is unknown here, as one that never existed (404, not 403).
      const scope = TenantScope.of(principalOf(request));
      const id = scope.resolve(request.params.task_id);
      const payload = request.query.include === 'payload';
      let view = id === undefined ? undefined : await tasks.view(id, scope, { payload });
      // Past its Redis retention: the archive, when the task has a tombstone (an InfluxDB outage
      // is a 503, not a 404).
      if (!view && id !== undefined) {
        try {
          view = await tasks.archived(id, scope);
        } catch (err: unknown) {
          throw eventsUnavailable(err, request.log);
        }
      }
      if (!view)
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${request.params.task_id} is unknown or has expired`,
        );
      return view;
    },
  );
};
