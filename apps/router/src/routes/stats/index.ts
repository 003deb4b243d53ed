import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import {
  fourFigures,
  isInvalidWindowError,
  StatsReply,
  WINDOW_PATTERN,
} from '@agent-reach/analytics';
import { ErrorReply, TENANT_PATTERN } from '@agent-reach/protocol';
import { httpError, principalOf, seesAllTenants } from '@agent-reach/service-kit';
import type { WaitingRoom } from '@agent-reach/dispatch';
import {
  eventsNotConfigured,
  eventsUnavailable,
  type EventsReader,
} from '../../observability/events-reader.ts';
import { roomFigures } from '../queues/index.ts';
import { seriesRoutes } from './series.ts';

/** `GET /v1/stats` query. */
export const StatsQuery = Type.Object(
  {
    window: Type.String({
      pattern: WINDOW_PATTERN,
      default: '15m',
      description: 'How far back from now: 30s, 15m, 1h, 7d… (at most 31d)',
    }),
    capability: Type.Optional(
      Type.String({
        pattern: '^([A-Za-z0-9_.:-]{1,128})?$',
        description: 'Only this capability; empty or absent for every one',
      }),
    ),
    by: Type.Union([Type.Literal('capability'), Type.Literal('agent')], {
      default: 'capability',
      description: 'One row per capability or per agent',
    }),
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
type StatsQuery = Static<typeof StatsQuery>;

/** What the stats route needs. */
export interface StatsRouteDeps {
  /** `undefined`: InfluxDB is not configured, every request is answered 503. */
  events: EventsReader | undefined;
  /** The waiting rooms: their figures now come with the window's (`queues`). */
  room?: WaitingRoom | undefined;
}

/**
 * The four figures from InfluxDB (docs/OBSERVABILITY.md): of the requester's tenant's tasks, or
 * for operators of every tenant's (or of the one `tenant` names); and a capability's figures
 * over time (`/v1/stats/series`).
 */
export const statsRoutes: FastifyPluginAsyncTypebox<StatsRouteDeps> = async (
  app,
  { events, room },
) => {
  await app.register(seriesRoutes, { events });
  app.get(
    '/v1/stats',
    {
      schema: {
        querystring: StatsQuery,
        response: { 200: StatsReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const query: StatsQuery = request.query;
      if (!events?.influx) throw eventsNotConfigured();
      const capability = query.capability ? query.capability : undefined;
      const principal = principalOf(request);
      const tenant = seesAllTenants(principal) ? query.tenant : principal.tenant;
      // The rooms are read from Redis first: a failure there is a store's, not InfluxDB's.
      const queues = room ? await roomFigures(room, capability, tenant) : undefined;
      try {
        const figures = await fourFigures(events.influx, {
          window: query.window,
          groupBy: query.by === 'agent' ? 'agent_id' : 'capability',
          ...(capability !== undefined ? { capability } : {}),
          ...(tenant !== undefined ? { tenant } : {}),
        });
        return {
          window: figures.window.literal,
          window_s: figures.window.seconds,
          by: query.by,
          capability: capability ?? null,
          generated_at: Date.now(),
          groups: figures.groups,
          ...(queues ? { queues } : {}),
        };
      } catch (err: unknown) {
        if (isInvalidWindowError(err)) throw httpError('INVALID_QUERY', err.message);
        throw eventsUnavailable(err, request.log);
      }
    },
  );
};
