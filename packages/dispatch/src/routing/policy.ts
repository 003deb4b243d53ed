import type { SnapshotAgent } from '@agent-reach/protocol';
import type { HashRing } from './hash-ring.ts';

/** Why an agent of the capability is not a candidate, in the order the filters apply. */
export type Exclusion =
  | 'offline'
  | 'starting'
  | 'draining'
  | 'suspect' // SUSPECT while a HEALTHY candidate exists
  | 'ejected'
  | 'missing_tags'
  | 'region'
  | 'observing'
  | 'on_trace'
  | 'full'
  | 'watermark';

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
}

export const DEFAULT_POLICY: PolicySettings = { watermark: 0.85, slowFactor: 1.5, slowPenalty: 0.25, maxBias: 0.05 };

/** An agent with its place in the decision. */
export interface Candidate {
  agent: SnapshotAgent;
  /** inflight / max_concurrency from the freshest count the router has. */
  load: number;
  /** Lower is better: load + slow penalty − priority/weight bias. */
  score: number;
  excluded?: Exclusion;
}

/** A routing decision: the candidates best first, and every agent of the capability explained. */
export interface Decision {
  ranked: Candidate[];
  all: Candidate[];
}

const EPSILON = 1e-9;
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

function hasAll(agent: SnapshotAgent, tags: readonly string[]): boolean {
  if (tags.length === 0) return true;
  const own = new Set([...agent.capabilities, ...(agent.tags ?? [])]);
  return tags.every((t) => own.has(t));
}

function capabilityMeanMs(agents: readonly SnapshotAgent[], capability: string): number | undefined {
  const values = agents.map((a) => a.ewma_ms?.[capability]).filter((v): v is number => typeof v === 'number' && v > 0);
  return values.length >= 2 ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
}

/**
 * Decides which agents may take a task and in what order. Filters, each exclusion recorded:
 * status (HEALTHY; SUSPECT only when no HEALTHY candidate; never OFFLINE, STARTING, DRAINING or
 * ejected), tags, region (strict, or preferred with fallback), observation mode, the task's
 * trace, full agents, and the concurrency watermark (skipped while another has room). Score:
 * load ratio, plus a penalty for an agent slower than 1.5× the capability's mean, minus a small
 * bounded bias for priority and weight. Equal scores are ordered by the consistent-hash ring
 * from the task_id, so a task_id keeps its agent while loads are equal. A session's agent comes
 * first while it is HEALTHY and under the watermark.
 */
export function decide(
  agents: readonly SnapshotAgent[],
  req: RouteRequest,
  ring: HashRing,
  inflightOf: (a: SnapshotAgent) => number = (a) => a.inflight,
  settings: PolicySettings = DEFAULT_POLICY,
  now: number = Date.now(),
): Decision {
  const mean = capabilityMeanMs(agents, req.capability);
  const all: Candidate[] = agents.map((agent) => {
    const load = inflightOf(agent) / Math.max(1, agent.max_concurrency);
    const ewma = agent.ewma_ms?.[req.capability];
    const slow = mean !== undefined && ewma !== undefined && ewma > settings.slowFactor * mean ? settings.slowPenalty : 0;
    const bias =
      clamp(0.01 * (agent.priority ?? 0), 0, settings.maxBias) + clamp(settings.maxBias * ((agent.weight ?? 1) - 1), -settings.maxBias, settings.maxBias);
    return { agent, load, score: load + slow - bias };
  });
  const exclude = (c: Candidate, why: Exclusion) => {
    c.excluded ??= why;
  };
  const open = () => all.filter((c) => !c.excluded);
  for (const c of all) {
    const a = c.agent;
    if (a.status === 'OFFLINE') exclude(c, 'offline');
    else if (a.status === 'STARTING') exclude(c, 'starting');
    else if (a.status === 'DRAINING') exclude(c, 'draining');
    else if (a.ejected_until && a.ejected_until > now) exclude(c, 'ejected');
    else if (!hasAll(a, req.tags ?? [])) exclude(c, 'missing_tags');
  }
  if (req.region) {
    const inRegion = open().filter((c) => c.agent.region === req.region);
    if (req.regionPolicy === 'strict' || inRegion.length > 0) for (const c of open()) if (c.agent.region !== req.region) exclude(c, 'region');
  }
  for (const c of open()) {
    if (c.agent.observe) exclude(c, 'observing');
    else if (req.exclude?.has(c.agent.agent_id)) exclude(c, 'on_trace');
    else if (inflightOf(c.agent) >= c.agent.max_concurrency) exclude(c, 'full');
  }
  if (open().some((c) => c.agent.status === 'HEALTHY')) for (const c of open()) if (c.agent.status === 'SUSPECT') exclude(c, 'suspect');
  if (open().some((c) => c.load < settings.watermark)) for (const c of open()) if (c.load >= settings.watermark) exclude(c, 'watermark');

  let ranked = order(open(), req.taskId, ring);
  if (req.avoid && ranked.length > 1) ranked = [...ranked.filter((c) => c.agent.agent_id !== req.avoid), ...ranked.filter((c) => c.agent.agent_id === req.avoid)];
  const sticky = req.sessionAgent ? ranked.find((c) => c.agent.agent_id === req.sessionAgent) : undefined;
  if (sticky && sticky.agent.status === 'HEALTHY' && sticky.load < settings.watermark) ranked = [sticky, ...ranked.filter((c) => c !== sticky)];
  return { ranked, all };
}

/** Lowest score first; equal scores by the ring from the task's point. */
function order(candidates: Candidate[], taskId: string, ring: HashRing): Candidate[] {
  const sorted = [...candidates].sort((a, b) => a.score - b.score);
  const out: Candidate[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i + 1;
    while (j < sorted.length && (sorted[j] as Candidate).score - (sorted[i] as Candidate).score < EPSILON) j++;
    const tie = sorted.slice(i, j);
    if (tie.length === 1) out.push(tie[0] as Candidate);
    else {
      const byId = new Map(tie.map((c) => [c.agent.agent_id, c]));
      for (const id of ring.order(taskId, new Set(byId.keys()))) out.push(byId.get(id) as Candidate);
    }
    i = j;
  }
  return out;
}
