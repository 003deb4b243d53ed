import type { RedisClient } from '@agent-reach/service-kit/redis';
import { DEFAULT_TENANT, type ReachKeys } from '@agent-reach/protocol';
import {
  decide,
  DEFAULT_POLICY,
  isPull,
  isPush,
  type Candidate,
  type Decision,
  type PolicySettings,
  type RouteRequest,
} from '../routing/policy.ts';
import type { SnapshotHolder } from '../snapshot/snapshot-holder.ts';
import type { TaskSpec } from '../task/task-spec.ts';

/** What routing a task reads: the snapshot held in memory, and Redis for the session's agent. */
export interface RoutingContext {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** The concurrency watermark the services run with (the rest of the policy is fixed). */
  watermark: () => number;
}

/** How one routing is done. */
export interface RouteOptions {
  /** A retry prefers another agent than this one (the last one's attempt failed). */
  avoid?: string;
  /** Count the best push candidate at once, so the next request of a burst sees it taken. */
  reserve?: boolean;
  /** How many candidates of each channel to order. @default Infinity */
  picks?: number;
}

/** The decision with the candidates a send tries. */
export interface Routed {
  decision: Decision;
  /** The best push candidates (at most `picks`), best first. */
  push: Candidate[];
  /** The best pull candidates (at most `picks`), best first; ordered on first read. */
  readonly pull: Candidate[];
  /** How many push candidates there are in all. */
  pushCount: number;
}

/** The policy with the watermark the services run with. */
export function policyWith(watermark: number): PolicySettings {
  return { ...DEFAULT_POLICY, watermark };
}

/** What `spec` asks of its agent, as the policy reads it: every send builds it here. */
export function routeRequestFor(
  spec: TaskSpec,
  extra: { sessionAgent?: string | null; avoid?: string } = {},
): RouteRequest {
  return {
    taskId: spec.taskId,
    capability: spec.capability,
    // Every send of the task keeps to its tenant's agents and the shared ones.
    tenant: spec.tenant || DEFAULT_TENANT,
    ...(spec.tags.length > 0 ? { tags: spec.tags } : {}),
    ...(spec.region ? { region: spec.region, regionPolicy: spec.regionPolicy } : {}),
    ...(extra.sessionAgent ? { sessionAgent: extra.sessionAgent } : {}),
    ...(spec.traceAgents.length > 0 ? { exclude: new Set(spec.traceAgents) } : {}),
    ...(extra.avoid ? { avoid: extra.avoid } : {}),
  };
}

/**
 * Routes a task by the constraints it carries, from the snapshot held in memory: the session's
 * agent (one read, only with a session) is the only Redis read.
 */
export async function routeTask(
  ctx: RoutingContext,
  spec: TaskSpec,
  opts: RouteOptions = {},
): Promise<Routed> {
  const sessionAgent = spec.sessionId
    ? await ctx.redis.get(ctx.keys.session(spec.sessionId))
    : undefined;
  const { snapshot } = ctx;
  const decision = decide(
    snapshot.agentsFor(spec.capability),
    routeRequestFor(spec, { sessionAgent, ...(opts.avoid ? { avoid: opts.avoid } : {}) }),
    snapshot.ringFor(spec.capability),
    snapshot.inflightOf,
    policyWith(ctx.watermark()),
  );
  const picks = opts.picks ?? Infinity;
  // Only the few candidates a send tries are ordered (ties walk the ring only that far).
  const push = decision.best(picks, isPush);
  // Count the choice at once, in the same tick as the decision, so the next request of a burst
  // already sees it (the delivery's reply settles it).
  if (opts.reserve && push[0]) snapshot.reserve(push[0].agent.agent_id);
  let pull: Candidate[] | undefined;
  return {
    decision,
    push,
    // Ordered only when read: a submission looks at pull agents only when no push agent took it.
    get pull() {
      return (pull ??= decision.best(picks, isPull));
    },
    pushCount: decision.count(isPush),
  };
}

/** A routing with the capability it routed to. */
export interface RoutedTo extends Routed {
  /** The capability routed to: the task's own, or the fallback in use. */
  capability: string;
  /** `capability` is one of the task's `fallbackCapabilities`: its own had no live agent. */
  fallback: boolean;
}

/**
 * Routes a task to its own capability, or, only while no agent of it is live for the task, to the
 * first of its `fallbackCapabilities` that has one, in the order the caller gave. Every send
 * (first, retry, reclaim, drain) comes here, so the task's own capability is checked first each
 * time. With no live agent anywhere, the routing of the task's own capability is returned.
 */
export async function routeWithFallback(
  ctx: RoutingContext,
  spec: TaskSpec,
  opts: RouteOptions = {},
): Promise<RoutedTo> {
  const own = await routeTask(ctx, spec, opts);
  const fallbacks = spec.fallbackCapabilities ?? [];
  if (fallbacks.length === 0 || hasLive(own.decision)) {
    return Object.assign(own, { capability: spec.capability, fallback: false });
  }
  for (const capability of fallbacks) {
    const routed = await routeTask(ctx, { ...spec, capability }, opts);
    // Not live: no candidate, so nothing was reserved.
    if (hasLive(routed.decision)) return Object.assign(routed, { capability, fallback: true });
  }
  return Object.assign(own, { capability: spec.capability, fallback: false });
}

/**
 * Some agent of the decision's capability is live for the task: a candidate, or one left out
 * only for being busy, SUSPECT, DEGRADED or on the task's trace (not of another tenant, offline,
 * starting, draining, ejected, or without the task's tags or region).
 */
export function hasLive(decision: Decision): boolean {
  return decision.count() > 0 || decision.all.some((c) => !UNSERVING.has(c.excluded ?? ''));
}

/** Exclusions that say an agent cannot serve the task at all (not that it is busy or on the trace). */
const UNSERVING = new Set([
  'tenant',
  'offline',
  'starting',
  'draining',
  'ejected',
  'missing_tags',
  'region',
  'observing',
]);

/** True when some agent would serve but every one is excluded for one of `reasons`. */
export function onlyExcludedFor(decision: Decision, reasons: readonly string[]): boolean {
  if (decision.count() > 0) return false;
  const live = decision.all.filter((c) => !UNSERVING.has(c.excluded ?? ''));
  return live.length > 0 && live.every((c) => reasons.includes(c.excluded ?? ''));
}
