import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  TimelineReply,
  influxTaskTimeline,
  withGaps,
  type StageRecord,
} from '@agent-reach/analytics';
import { ErrorReply, TaskParams } from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import { eventsUnavailable, type EventsReader } from '../../observability/events-reader.ts';
import type { TaskReader } from '../../tasks/task-reader.ts';
import { TenantScope } from '../../tasks/tenant-scope.ts';

/** Slack around an archived task's life when its points are looked for (clocks of other processes). */
const RANGE_MARGIN_MS = 60_000;

/** What the timeline route needs. */
export interface TimelineRouteDeps {
  tasks: TaskReader;
  /** `undefined`: InfluxDB is not configured, only Redis is looked in. */
  events: EventsReader | undefined;
}

function fromRedis(entry: Record<string, unknown> & { stage: string; at: number }): StageRecord {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    stage: entry.stage,
    at: entry.at,
    agent_id: text(entry.agent_id),
    attempt: typeof entry.attempt === 'number' ? entry.attempt : undefined,
    duration_ms: typeof entry.duration_ms === 'number' ? entry.duration_ms : undefined,
    reason: text(entry.reason) ?? text(entry.error),
  };
}

/**
 * A task's stages with the gap between them: from Redis while the task's state is there, from
 * its points in InfluxDB once that state expired.
 */
export const timelineRoutes: FastifyPluginAsyncTypebox<TimelineRouteDeps> = async (
  app,
  { tasks, events },
) => {
  app.get(
    '/v1/tasks/:task_id/timeline',
    {
      schema: {
        params: TaskParams,
        response: { 200: TimelineReply, 400: ErrorReply, 404: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      // Another tenant's task is unknown here (404), as for GET /v1/tasks/:task_id.
      const scope = TenantScope.of(principalOf(request));
      const taskId = request.params.task_id;
      const id = scope.resolve(taskId);
      if (id === undefined)
        throw httpError('TASK_NOT_FOUND', `task ${taskId} is unknown or has expired`);
      const view = await tasks.view(id, scope);
      if (view) {
        const stages = withGaps(
          view.timeline.map((e) => fromRedis(e as Record<string, unknown> & typeof e)),
        );
        // The links both ways: the parent that submitted this task, the children it submitted.
        return {
          task_id: taskId,
          source: 'redis' as const,
          ...(view.parent_task_id !== undefined ? { parent_task_id: view.parent_task_id } : {}),
          ...(view.children !== undefined ? { children: view.children } : {}),
          stages,
        };
      }
      if (!events?.influx) {
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${taskId} is unknown or has expired (InfluxDB is not configured to look further back)`,
        );
      }
      let found;
      try {
        // An archived task says when it lived: its points are read from that range only.
        const archived = await tasks.archived(id, scope);
        const last = Math.max(0, ...(archived?.timeline ?? []).map((e) => e.at));
        const range =
          archived && last > 0
            ? { fromMs: archived.created_at - RANGE_MARGIN_MS, toMs: last + RANGE_MARGIN_MS }
            : undefined;
        found = await influxTaskTimeline(events.influx, id, {
          lookback: events.timelineLookback,
          ...(range ? { range } : {}),
        });
      } catch (err: unknown) {
        throw eventsUnavailable(err, request.log);
      }
      const { stages, parent_task_id: parent } = found;
      if (stages.length === 0) {
        throw httpError(
          'TASK_NOT_FOUND',
          `task ${taskId} is unknown: not in Redis, nor in InfluxDB over the last ${events.timelineLookback}`,
        );
      }
      // Only the parent: the children's points name it, and finding them would scan the window again.
      return {
        task_id: taskId,
        source: 'influxdb' as const,
        ...(parent !== undefined ? { parent_task_id: scope.show(parent) } : {}),
        stages,
      };
    },
  );
};
