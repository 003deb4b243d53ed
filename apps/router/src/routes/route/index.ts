import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { ErrorReply, RouteQuery, RouteReply, type ReachKeys } from '@agent-reach/protocol';
import { routeWithFallback, type SnapshotHolder } from '@agent-reach/dispatch';
import { principalOf, seesAllTenants } from '@agent-reach/service-kit';
import { specFromSubmit } from '../../submit/task-spec.ts';

/** What the route explanation needs. */
export interface RouteRouteDeps {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** The concurrency watermark in force. */
  watermark: () => number;
}

/**
 * `GET /v1/route`: the decision the router would make for a task, explained, without delivering;
 * with `fallback`, which capability it would route to.
 */
export const routeRoutes: FastifyPluginAsyncTypebox<RouteRouteDeps> = async (app, deps) => {
  app.get(
    '/v1/route',
    {
      // Routing debug: which agents would take a task (operators and callers, not agents).
      config: { roles: ['operator', 'caller'] },
      schema: {
        querystring: RouteQuery,
        response: { 200: RouteReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const q = request.query;
      // A task of the requester's tenant; only operators see other tenants' agents listed.
      const principal = principalOf(request);
      const all = seesAllTenants(principal);
      const tags = q.tags ? q.tags.split(',').filter((t) => t !== '') : undefined;
      const fallbacks = q.fallback ? q.fallback.split(',').filter((c) => c !== '') : undefined;
      // The same routing a submission of this task would get.
      const spec = specFromSubmit(
        q.task_id ?? 'route-query',
        {
          capability: q.capability,
          payload: null,
          ...(tags ? { tags } : {}),
          ...(q.region ? { region: q.region, region_policy: q.region_policy ?? 'prefer' } : {}),
          ...(q.session_id ? { session_id: q.session_id } : {}),
          ...(fallbacks ? { fallback_capabilities: fallbacks } : {}),
        },
        'null',
        undefined,
        principal.tenant,
      );
      const routed = await routeWithFallback(deps, spec);
      const best = routed.decision.ranked[0];
      const order = new Map(routed.decision.ranked.map((c, i) => [c.agent.agent_id, i]));
      const candidates = routed.decision.all
        .filter((c) => all || c.excluded !== 'tenant')
        .sort(
          (a, b) =>
            (order.get(a.agent.agent_id) ?? 1e9) - (order.get(b.agent.agent_id) ?? 1e9) ||
            a.score - b.score,
        )
        .map((c) => ({
          agent_id: c.agent.agent_id,
          score: Number(c.score.toFixed(4)),
          load: Number(c.load.toFixed(4)),
          ...(c.excluded ? { excluded: c.excluded } : {}),
        }));
      return {
        agent_id: best?.agent.agent_id ?? '',
        channel: best ? best.agent.channel : ('none' as const),
        score: best ? Number(best.score.toFixed(4)) : 0,
        snapshot_age_ms: deps.snapshot.info().age_ms,
        capability: routed.capability,
        fallback: routed.fallback,
        candidates,
      };
    },
  );
};
