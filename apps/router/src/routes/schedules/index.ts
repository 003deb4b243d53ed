import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorReply,
  ScheduleBody,
  ScheduleList,
  ScheduleParams,
  ScheduleView,
} from '@agent-reach/protocol';
import { nextTick, type ScheduleStore } from '@agent-reach/dispatch';
import { httpError, principalOf } from '@agent-reach/service-kit';
import { TenantScope } from '../../tasks/tenant-scope.ts';
import type { WebhookTargets } from '../../webhooks/webhook-targets.ts';
import {
  newSchedule,
  scheduleView,
  type ScheduleLimits,
} from '../../schedules/schedule-request.ts';

/** What the schedule routes need. */
export interface ScheduleRouteDeps {
  store: ScheduleStore;
  limits: ScheduleLimits;
  /** Webhook targets: a schedule's task with `callback_url`; without them, one is refused. */
  webhooks?: WebhookTargets;
}

const tags = ['schedules'];
/** Callers and operators, like the task routes they stand for; agents submit no schedules. */
const config = { roles: ['caller', 'operator'] as const };
const errors = {
  400: ErrorReply,
  401: ErrorReply,
  403: ErrorReply,
  404: ErrorReply,
  503: ErrorReply,
};

/**
 * Recurring tasks (`POST /v1/schedules`): registry-sync's leader fires each tick as a task
 * `<schedule_id>:<tick ms>`. A tenant sees and changes only its own schedules (another's is 404);
 * operators name another tenant's `<tenant>/<schedule_id>`.
 */
export const schedulesRoutes: FastifyPluginAsyncTypebox<ScheduleRouteDeps> = async (
  app,
  { store, limits, webhooks },
) => {
  /** The schedule a path names, if the requester may see it; 404 otherwise. */
  const find = async (scope: TenantScope, name: string) => {
    const id = scope.resolve(name);
    const found = id === undefined ? undefined : await store.get(id);
    if (!found) throw httpError('SCHEDULE_NOT_FOUND', `schedule ${name} is unknown`);
    return found;
  };

  app.post(
    '/v1/schedules',
    {
      config,
      schema: {
        tags,
        summary: 'Fire a task on a cron expression or every every_ms',
        body: ScheduleBody,
        response: { 201: ScheduleView, 413: ErrorReply, ...errors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const scope = TenantScope.of(principal);
      const record = newSchedule(principal, scope, request.body, limits, Date.now());
      const url = request.body.task.callback_url;
      if (url !== undefined) {
        // Its ticks' tasks (`<schedule_id>:<tick>`) find the schedule's target.
        if (!webhooks) throw httpError('CALLBACK_URL_NOT_ALLOWED', 'this router sends no webhooks');
        const topic = record.spec.callbackTopic || undefined;
        record.spec.callbackTopic = await webhooks.register(
          record.id,
          url,
          topic,
          scope.tenant,
          'schedule',
        );
      }
      await store.create(record);
      request.log.info(
        { schedule_id: record.id, capability: record.spec.capability, by: principal.keyId },
        'schedule created',
      );
      return reply.code(201).send(scheduleView(scope, record));
    },
  );

  app.get(
    '/v1/schedules',
    {
      config,
      schema: {
        tags,
        summary: 'Schedules of your tenant (operators: all)',
        response: { 200: ScheduleList, ...errors },
      },
    },
    async (request) => {
      const scope = TenantScope.of(principalOf(request));
      const records = await store.list(scope.all ? undefined : scope.tenant);
      return { schedules: records.map((r) => scheduleView(scope, r)) };
    },
  );

  app.get(
    '/v1/schedules/:schedule_id',
    {
      config,
      schema: {
        tags,
        summary: 'One schedule',
        params: ScheduleParams,
        response: { 200: ScheduleView, ...errors },
      },
    },
    async (request) => {
      const scope = TenantScope.of(principalOf(request));
      return scheduleView(scope, await find(scope, request.params.schedule_id));
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/v1/schedules/:schedule_id/${action}`,
      {
        config,
        schema: {
          tags,
          summary:
            action === 'pause'
              ? 'Stop firing until resumed (idempotent)'
              : 'Fire again from the next tick after now; ticks missed while paused are skipped',
          params: ScheduleParams,
          response: { 200: ScheduleView, ...errors },
        },
      },
      async (request) => {
        const scope = TenantScope.of(principalOf(request));
        const found = await find(scope, request.params.schedule_id);
        const now = Date.now();
        const next = action === 'pause' ? 0 : nextTick(found.cadence, now);
        if (!(await store.setPaused(found.id, action === 'pause', next))) {
          throw httpError(
            'SCHEDULE_NOT_FOUND',
            `schedule ${request.params.schedule_id} is unknown`,
          );
        }
        request.log.info({ schedule_id: found.id, action }, `schedule ${action}d`);
        return scheduleView(scope, { ...found, paused: action === 'pause', nextRunAt: next });
      },
    );
  }

  app.delete(
    '/v1/schedules/:schedule_id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a schedule; the tasks it fired are left as they are',
        params: ScheduleParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      const scope = TenantScope.of(principalOf(request));
      const found = await find(scope, request.params.schedule_id);
      if (!(await store.delete(found.id))) {
        throw httpError('SCHEDULE_NOT_FOUND', `schedule ${request.params.schedule_id} is unknown`);
      }
      await webhooks?.forget(found.id);
      request.log.info({ schedule_id: found.id }, 'schedule deleted');
      return reply.code(204).send();
    },
  );
};
