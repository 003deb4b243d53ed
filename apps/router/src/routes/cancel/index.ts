import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CancelReply, ErrorReply, TaskParams } from '@agent-reach/protocol';
import type { TaskCanceller } from '@agent-reach/dispatch';
import { httpError, principalOf } from '@agent-reach/service-kit';
import { TenantScope } from '../../tasks/tenant-scope.ts';

/**
 * `POST /v1/tasks/:task_id/cancel`: the task is final for the caller at once (202
 * `{task_id, status: "cancelled"}`), and so are its children; the agent running it is told to
 * stop. A finished task answers 409 ALREADY_FINAL; another tenant's, 404 as one that never
 * existed. Cancelling a cancelled task again answers 202 and changes nothing.
 */
export const cancelRoutes: FastifyPluginAsyncTypebox<{ canceller: TaskCanceller }> = async (
  app,
  { canceller },
) => {
  app.post(
    '/v1/tasks/:task_id/cancel',
    {
      schema: {
        params: TaskParams,
        response: {
          202: CancelReply,
          400: ErrorReply,
          404: ErrorReply,
          409: ErrorReply,
          503: ErrorReply,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const scope = TenantScope.of(principal);
      const id = scope.resolve(request.params.task_id);
      const outcome =
        id === undefined
          ? { kind: 'unknown' as const }
          : await canceller.cancel(id, principal.keyId);
      if (outcome.kind === 'unknown')
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${request.params.task_id} is unknown or has expired`,
        );
      if (outcome.kind === 'final')
        throw httpError(
          'ALREADY_FINAL',
          `task ${request.params.task_id} has already completed or been dead-lettered; there is nothing to cancel`,
        );
      if (outcome.children > 0)
        request.log.info(
          { task_id: outcome.taskId, children: outcome.children },
          'children cancelled too',
        );
      return reply.code(202).send({ task_id: scope.show(outcome.taskId), status: 'cancelled' });
    },
  );
};
