import { DEFAULT_TENANT, SHARED_DEFAULTS, type SnapshotAgent } from '@agent-reach/protocol';
import { exclusionCode, RoutingDecision, type Decision } from './routing-decision.ts';
import type { HashRing } from './hash-ring.ts';
import { scoreOffsets } from './score-offsets.ts';

export type { Candidate, Decision, Exclusion } from './routing-decision.ts';

/**
 * The freshest inflight count of an agent: loads the router learned after the snapshot was written
 * (from its own deliveries). `decide()` passes its clock, read once per decision, so a source
 * that ages its counts need not read the clock for every agent, and the agent's place in the list
 * it decides over (`list[index]`), so a source can find the agent's count by position.
 */
export type LiveInflight = (
  agent: SnapshotAgent,
  now: number,
  index: number,
  list: readonly SnapshotAgent[],
) => number;

/** What a task asks of its agent. */
export interface RouteRequest {
  taskId: string;
  capability: string;
  tags?: readonly string[];
  region?: string;
  /** @default 'prefer' */
  regionPolicy?: 'strict' | 'prefer';
  /** The agent the task's session stuck to, if any. */
  sessionAgent?: string;
  /** Agents that may not take it (already on its trace). */
  exclude?: ReadonlySet<string>;
  /** A retry prefers another agent than this one. */
  avoid?: string;
  /**
   * The task's tenant: only agents of that tenant, or shared ones, may take it. Absent: any
   * agent (a routing question that is not about one tenant's task).
   */
  tenant?: string;
}

/** Tunables of the policy. */
export interface PolicySettings {
  /** An agent at or above this share of max_concurrency is skipped while another has room. @default 0.85 */
  watermark: number;
  /** An agent whose execution-time EWMA is over this multiple of the capability's mean is penalised. @default 1.5 */
  slowFactor: number;
  /** Score penalty of a slow agent, in load units. @default 0.25 */
  slowPenalty: number;
  /** Largest bias priority and weight can give, in load units. @default 0.05 each */
  maxBias: number;
  /**
   * Score penalty of an agent's health, in load units per 100 points of health score it lacks
   * (docs/ROUTING.md, Health in the score). @default 10: a score of 95 adds 0.5, one of 90 (where
   * DEGRADED begins) a whole agent
   */
  healthPenalty: number;
  /** A health score at or above this counts as 100: one bad outcome in 50 is noise. @default 98 */
  healthFloor: number;
}

export const DEFAULT_POLICY: PolicySettings = {
  watermark: SHARED_DEFAULTS.watermark,
  slowFactor: 1.5,
  slowPenalty: 0.25,
  maxBias: 0.05,
  healthPenalty: 10,
  healthFloor: 98,
};

/** An agent the router delivers to (its inbox), not one that pulls from its capability's pool. */
export const isPush = (agent: SnapshotAgent): boolean => agent.channel !== 'pull';
/** An agent that pulls its tasks from its capability's pool. */
export const isPull = (agent: SnapshotAgent): boolean => agent.channel === 'pull';

const TENANT = exclusionCode('tenant');
const OFFLINE = exclusionCode('offline');
const STARTING = exclusionCode('starting');
const DRAINING = exclusionCode('draining');
const UNREACHABLE = exclusionCode('unreachable');
const DEPENDENCY_DOWN = exclusionCode('dependency_down');
const SUSPECT = exclusionCode('suspect');
const EJECTED = exclusionCode('ejected');
const DEGRADED = exclusionCode('degraded');
const MISSING_TAGS = exclusionCode('missing_tags');
const REGION = exclusionCode('region');
const OBSERVING = exclusionCode('observing');
const ON_TRACE = exclusionCode('on_trace');
const FULL = exclusionCode('full');
const WATERMARK = exclusionCode('watermark');

function hasAll(agent: SnapshotAgent, tags: readonly string[]): boolean {
  for (const t of tags)
    if (!agent.capabilities.includes(t) && !agent.tags?.includes(t)) return false;
  return true;
}

/** True when `agent` may take tasks of `tenant`: its own tenant's, or every tenant's when shared. */
export function servesTenant(agent: SnapshotAgent, tenant: string): boolean {
  return agent.shared === true || (agent.tenant || DEFAULT_TENANT) === tenant;
}

/** The first exclusion of the tenant, status, ejection and tag filters, or 0. */
function ineligible(
  a: SnapshotAgent,
  tags: readonly string[],
  now: number,
  tenant: string | undefined,
): number {
  if (tenant !== undefined && !servesTenant(a, tenant)) return TENANT;
  if (a.status === 'OFFLINE') return OFFLINE;
  if (a.status === 'STARTING') return STARTING;
  if (a.status === 'DRAINING') return DRAINING;
  if (a.unreachable) return UNREACHABLE;
  // Tasks wait (in the pool, within their deadlines) rather than fail on a dependency that is
  // down for every agent; an agent without the flag takes them meanwhile.
  if (a.dependency_down) return DEPENDENCY_DOWN;
  if (a.ejected_until && a.ejected_until > now) return EJECTED;
  if (tags.length > 0 && !hasAll(a, tags)) return MISSING_TAGS;
  return 0;
}

/**
 * Decides which agents may take a task and in what order. Filters, each exclusion recorded:
 * tenant (an agent of the task's tenant, or a shared one), status (HEALTHY; SUSPECT only when no
 * HEALTHY candidate; DEGRADED only when no HEALTHY candidate has room, under the watermark; never
 * OFFLINE, STARTING, DRAINING, ejected, unreachable or down with a shared dependency), tags, region (strict, or preferred with fallback), observation mode, the task's
 * trace, full agents, and the concurrency watermark (skipped while another has room). Score:
 * load ratio, plus a penalty for an agent slower than 1.5× the capability's mean, minus a small
 * bounded bias for priority and weight. Equal scores are ordered by the consistent-hash ring
 * from the task_id, so a task_id keeps its agent while loads are equal. A session's agent comes
 * first while it is HEALTHY and under the watermark; the agent a retry avoids comes last.
 *
 * Filtering and scoring fill one typed array in a few passes, with no object per agent; the
 * ranking is done when the decision's `ranked` or `best()` is read, and `best(k)` orders only the
 * ties it needs (ranking.ts).
 */
export function decide(
  agents: readonly SnapshotAgent[],
  req: RouteRequest,
  ring: HashRing,
  inflightOf: LiveInflight = (a) => a.inflight,
  settings: PolicySettings = DEFAULT_POLICY,
  now: number = Date.now(),
): Decision {
  const n = agents.length;
  const { health, penalty, bias } = scoreOffsets(agents, req.capability, settings);
  const tags = req.tags ?? [];
  // Per agent: its load, its score, and 0 while it is a candidate, else its first exclusion's
  // code: each filter below only looks at agents still open, so an agent keeps the reason of the
  // first filter that took it; -FULL marks a full agent until the filters before `full` have had
  // their say. Plain arrays: a typed array over 64 bytes lives outside the heap, and allocating
  // and freeing one per decision costs more than the decision's own work.
  const load = new Array<number>(n);
  // The load with the health penalty added (docs/ROUTING.md, Health in the score): what the score
  // and the watermark are reckoned on. `full` stays on the true count.
  const adjusted = new Array<number>(n);
  const score = new Array<number>(n);
  const excluded = new Array<number>(n);
  let inRegion = 0;
  for (let i = 0; i < n; i++) {
    const a = agents[i] as SnapshotAgent;
    const inflight = inflightOf(a, now, i, agents);
    load[i] = inflight / Math.max(1, a.max_concurrency);
    adjusted[i] = (load[i] as number) + (health[i] as number);
    const value = (adjusted[i] as number) + (penalty[i] as number) - (bias[i] as number);
    // Snapshot counts are finite integers; a count source that answers NaN must not unsettle
    // the ranking, so such an agent ranks last.
    score[i] = Number.isFinite(value) ? value : Number.MAX_VALUE;
    const why = ineligible(a, tags, now, req.tenant);
    excluded[i] = why === 0 && inflight >= a.max_concurrency ? -FULL : why;
    if (why === 0 && req.region && a.region === req.region) inRegion++;
  }
  const byRegion = !!req.region && (req.regionPolicy === 'strict' || inRegion > 0);
  // The suspect and watermark filters depend on what the filters before them left: count it here
  // (agents under the watermark, with SUSPECT ones apart) so one more pass applies both.
  let healthy = 0;
  let roomyHealthy = 0;
  let roomy = 0;
  let roomySuspects = 0;
  for (let i = 0; i < n; i++) {
    if ((excluded[i] as number) > 0) continue;
    const a = agents[i] as SnapshotAgent;
    if (byRegion && a.region !== req.region) excluded[i] = REGION;
    else if (a.observe) excluded[i] = OBSERVING;
    else if (req.exclude?.has(a.agent_id)) excluded[i] = ON_TRACE;
    else if (excluded[i] === -FULL) excluded[i] = FULL;
    else {
      if (a.status === 'HEALTHY') healthy++;
      if ((adjusted[i] as number) < settings.watermark) {
        if (a.status === 'SUSPECT') roomySuspects++;
        else roomy++;
        if (a.status === 'HEALTHY') roomyHealthy++;
      }
    }
  }
  if (healthy === 0) roomy += roomySuspects;
  const open: number[] = [];
  let sticky = -1;
  let avoid = -1;
  for (let i = 0; i < n; i++) {
    if (excluded[i] !== 0) continue;
    const a = agents[i] as SnapshotAgent;
    if (healthy > 0 && a.status === 'SUSPECT') {
      excluded[i] = SUSPECT;
      continue;
    }
    // A DEGRADED agent takes work only the HEALTHY ones have no room for.
    if (roomyHealthy > 0 && a.status === 'DEGRADED') {
      excluded[i] = DEGRADED;
      continue;
    }
    if (roomy > 0 && (adjusted[i] as number) >= settings.watermark) {
      excluded[i] = WATERMARK;
      continue;
    }
    open.push(i);
    if (sticky < 0 && req.sessionAgent && a.agent_id === req.sessionAgent) {
      if (a.status === 'HEALTHY' && (adjusted[i] as number) < settings.watermark) sticky = i;
    }
    if (avoid < 0 && req.avoid && a.agent_id === req.avoid) avoid = i;
  }
  return new RoutingDecision(
    { agents, score, open, ring, taskId: req.taskId, sticky, avoid },
    load,
    excluded,
  );
}
