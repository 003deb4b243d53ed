import { DEFAULT_POLICY, decide, rankCandidates, type SnapshotHolder } from '@agent-reach/dispatch';
import { shuffled, type Random } from './prng.ts';
import { SIM_CAPABILITY } from './router-view.ts';

/** Policies the lab compares. `least-load-exact` is a reference: it reads true loads, no router can. */
export const POLICY_NAMES = [
  'round-robin',
  'random',
  'least-load',
  'project',
  'least-load-exact',
] as const;
/**
 * The health lab's pair: the project's policy, and the same with no health penalty (the policy
 * before health entered the score).
 */
export const HEALTH_POLICY_NAMES = ['project', 'project-no-health'] as const;
/** Name of a policy the lab compares. */
export type PolicyName = (typeof POLICY_NAMES)[number] | (typeof HEALTH_POLICY_NAMES)[number];

/** What a policy may look at when it orders the candidates for one task. */
export interface PolicyContext {
  /** The deciding router's view: the 5 s snapshot plus its own deliveries' counts. */
  view: SnapshotHolder;
  /** True inflight of an agent. Only the reference policy reads it. */
  trueInflight: (agentId: string) => number;
  /** The policy's own random stream. */
  rng: Random;
}

/** A routing policy: agent ids in the order delivery should be tried for a task. */
export interface Policy {
  readonly name: PolicyName;
  order(taskId: string, ctx: PolicyContext): string[];
}

/** A fresh policy (round-robin keeps a cursor, so each run gets its own). */
export function createPolicy(name: PolicyName): Policy {
  switch (name) {
    case 'round-robin':
      return roundRobin();
    case 'random':
      return { name, order: (_t, ctx) => shuffled(ctx.rng, ids(ctx.view)) };
    case 'least-load':
      return { name, order: (_t, ctx) => leastLoad(ctx, (a) => ctx.view.inflightOf(a)) };
    case 'least-load-exact':
      return { name, order: (_t, ctx) => leastLoad(ctx, (a) => ctx.trueInflight(a.agent_id)) };
    case 'project':
      return { name, order: projectOrder };
    case 'project-no-health':
      return { name, order: noHealthOrder };
  }
}

/**
 * The project's policy, called exactly as the router's dispatcher calls it
 * (apps/router/src/dispatch/dispatcher.ts `rank`). Keep the two calls the same.
 */
function projectOrder(taskId: string, ctx: PolicyContext): string[] {
  const view = ctx.view;
  return rankCandidates(
    view.agentsFor(SIM_CAPABILITY),
    taskId,
    view.ringFor(SIM_CAPABILITY),
    view.inflightOf,
  ).map((r) => r.agent.agent_id);
}

const NO_HEALTH = { ...DEFAULT_POLICY, healthPenalty: 0 };

/** The project's policy with the health penalty at 0. */
function noHealthOrder(taskId: string, ctx: PolicyContext): string[] {
  const view = ctx.view;
  return decide(
    view.agentsFor(SIM_CAPABILITY),
    { taskId, capability: SIM_CAPABILITY },
    view.ringFor(SIM_CAPABILITY),
    view.inflightOf,
    NO_HEALTH,
  ).ranked.map((r) => r.agent.agent_id);
}

function ids(view: SnapshotHolder): string[] {
  return view.agentsFor(SIM_CAPABILITY).map((a) => a.agent_id);
}

type ViewAgent = ReturnType<SnapshotHolder['agentsFor']>[number];

/** Lowest inflight / max_concurrency first; ties in random order. */
function leastLoad(ctx: PolicyContext, inflight: (a: ViewAgent) => number): string[] {
  return ctx.view
    .agentsFor(SIM_CAPABILITY)
    .map((a) => ({
      id: a.agent_id,
      load: inflight(a) / Math.max(1, a.max_concurrency),
      tie: ctx.rng(),
    }))
    .sort((x, y) => x.load - y.load || x.tie - y.tie)
    .map((x) => x.id);
}

function roundRobin(): Policy {
  let cursor = 0;
  return {
    name: 'round-robin',
    order: (_t, ctx) => {
      const all = ids(ctx.view);
      if (all.length === 0) return [];
      const start = cursor++ % all.length;
      return [...all.slice(start), ...all.slice(0, start)];
    },
  };
}
