import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { ErrorReply, QueuesReply, TENANT_PATTERN, type QueueStats } from '@agent-reach/protocol';
import { principalOf, seesAllTenants } from '@agent-reach/service-kit';
import type { WaitingRoom } from '@agent-reach/dispatch';

/** `GET /v1/queues` query. */
export const QueuesQuery = Type.Object(
  {
    capability: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:-]{1,128}$',
        description: 'Only this capability’s room',
      }),
    ),
    tenant: Type.Optional(
      Type.String({
        pattern: TENANT_PATTERN,
        description:
          "Operators: only this tenant's figures. Other keys always see their own tenant's",
      }),
    ),
  },
  { additionalProperties: false },
);
type QueuesQuery = Static<typeof QueuesQuery>;

/** A room's figures as one tenant sees them: its own row, and the room's counts as its own. */
function onlyTenant(q: QueueStats, tenant: string): QueueStats {
  const mine = q.tenants.filter((t) => t.tenant === tenant);
  return {
    capability: q.capability,
    queued: mine[0]?.queued ?? 0,
    taking: 0,
    held: 0,
    oldest_wait_ms: mine[0]?.oldest_wait_ms ?? 0,
    tenants: mine,
  };
}

/**
 * The rooms' figures now (of one capability, or every one), as `tenant` may see them: every
 * tenant's when undefined (an operator asking for all), else that tenant's own rows.
 */
export async function roomFigures(
  room: WaitingRoom,
  capability: string | undefined,
  tenant: string | undefined,
): Promise<QueueStats[]> {
  const all = await room.allStats(Date.now(), capability);
  return tenant === undefined ? all : all.map((q) => onlyTenant(q, tenant));
}

/**
 * The waiting rooms' figures from Redis (docs/ROUTING.md, Waiting room): per capability and
 * tenant, tasks waiting, the oldest wait, recent waits and shares of the sent tasks. Operators see
 * every tenant; other keys their own tenant's figures only.
 */
export const queuesRoutes: FastifyPluginAsyncTypebox<{ room: WaitingRoom }> = async (
  app,
  { room },
) => {
  app.get(
    '/v1/queues',
    {
      schema: {
        tags: ['stats'],
        summary: "The waiting rooms' figures per capability and tenant",
        querystring: QueuesQuery,
        response: { 200: QueuesReply, 400: ErrorReply },
      },
    },
    async (request) => {
      const query: QueuesQuery = request.query;
      const principal = principalOf(request);
      const tenant = seesAllTenants(principal) ? query.tenant : principal.tenant;
      const now = Date.now();
      return { generated_at: now, queues: await roomFigures(room, query.capability, tenant) };
    },
  );
};
