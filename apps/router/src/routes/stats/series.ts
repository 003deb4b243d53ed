import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import {
  capabilitySeries,
  isInvalidWindowError,
  SeriesReply,
  WINDOW_PATTERN,
} from '@agent-reach/analytics';
import { ErrorReply, TENANT_PATTERN } from '@agent-reach/protocol';
import { httpError, principalOf, seesAllTenants } from '@agent-reach/service-kit';
import {
  eventsNotConfigured,
  eventsUnavailable,
  type EventsReader,
} from '../../observability/events-reader.ts';

/** `GET /v1/stats/series` query. */
export const SeriesQuery = Type.Object(
  {
    capability: Type.String({
      pattern: '^[A-Za-z0-9_.:-]{1,128}$',
      description: 'The capability',
    }),
    window: Type.String({
      pattern: WINDOW_PATTERN,
      default: '1h',
      description: 'How far back from now: 15m, 1h, 24h… (at most 31d)',
    }),
    step: Type.Optional(
      Type.String({
        pattern: WINDOW_PATTERN,
        description:
          'The width of each point, e.g. 1m: at most the window, and at most 1000 points (default: the window / 60)',
      }),
    ),
    tenant: Type.Optional(
      Type.String({
        pattern: TENANT_PATTERN,
        description:
          "Operators: only this tenant's tasks (every tenant's when absent). Other keys always see their own tenant's",
      }),
    ),
  },
  { additionalProperties: false },
);
type SeriesQuery = Static<typeof SeriesQuery>;

/**
 * A capability's outcomes and execution time per step over a window, from InfluxDB
 * (docs/OBSERVABILITY.md): of the requester's tenant's tasks, or for operators of every
 * tenant's (or of the one `tenant` names). The same scope and replies as `GET /v1/stats`.
 */
export const seriesRoutes: FastifyPluginAsyncTypebox<{ events: EventsReader | undefined }> = async (
  app,
  { events },
) => {
  app.get(
    '/v1/stats/series',
    {
      schema: {
        querystring: SeriesQuery,
        response: { 200: SeriesReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const query: SeriesQuery = request.query;
      if (!events?.influx) throw eventsNotConfigured();
      const principal = principalOf(request);
      const tenant = seesAllTenants(principal) ? query.tenant : principal.tenant;
      try {
        const series = await capabilitySeries(events.influx, {
          window: query.window,
          capability: query.capability,
          ...(query.step !== undefined ? { step: query.step } : {}),
          ...(tenant !== undefined ? { tenant } : {}),
        });
        return {
          capability: series.capability,
          window: series.window.literal,
          window_s: series.window.seconds,
          step: series.step.literal,
          step_ms: series.step.seconds * 1000,
          generated_at: Date.now(),
          points: series.points,
        };
      } catch (err: unknown) {
        if (isInvalidWindowError(err)) throw httpError('INVALID_QUERY', err.message);
        throw eventsUnavailable(err, request.log);
      }
    },
  );
};
