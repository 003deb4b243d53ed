import type { SnapshotAgent } from '@agent-reach/protocol';
import { rankAll, rankBest, type ScoredAgents } from './ranking.ts';

/** Why an agent of the capability is not a candidate, in the order the filters apply. */
export type Exclusion =
  | 'tenant' // of another tenant, and not shared
  | 'offline'
  | 'starting'
  | 'draining'
  | 'unreachable' // an endpoint agent whose endpoint does not answer its relay
  | 'dependency_down' // SUSPECT for a dependency flagged down fleet-wide
  | 'suspect' // SUSPECT while a HEALTHY candidate exists
  | 'ejected'
  | 'degraded' // DEGRADED while a HEALTHY candidate has room
  | 'missing_tags'
  | 'region'
  | 'observing'
  | 'on_trace'
  | 'full'
  | 'watermark';

/** Exclusion codes as `decide()` records them: 0 is a candidate, code c is `EXCLUSIONS[c - 1]`. */
export const EXCLUSIONS: readonly Exclusion[] = [
  'tenant',
  'offline',
  'starting',
  'draining',
  'unreachable',
  'dependency_down',
  'suspect',
  'ejected',
  'degraded',
  'missing_tags',
  'region',
  'observing',
  'on_trace',
  'full',
  'watermark',
];

/** The code of an exclusion in `EXCLUSIONS`. */
export const exclusionCode = (why: Exclusion): number => EXCLUSIONS.indexOf(why) + 1;

/** An agent with its place in the decision. */
export interface Candidate {
  agent: SnapshotAgent;
  /** inflight / max_concurrency from the freshest count the router has. */
  load: number;
  /** Lower is better: load + slow penalty − priority/weight bias. */
  score: number;
  excluded?: Exclusion;
}

/**
 * A routing decision: the candidates best first, and every agent of the capability explained.
 * Loads, scores and exclusions are fixed when the decision is made; the lists are built on first
 * read, so a caller that needs only the best few pays for those.
 */
export interface Decision {
  /** Every candidate, best first. */
  readonly ranked: Candidate[];
  /** Every agent of the capability, in the snapshot's order, each excluded one with why. */
  readonly all: Candidate[];
  /**
   * The first `k` of `ranked` whose agent passes `where` (`ranked.filter(where).slice(0, k)`),
   * ordering only as many ties as that needs.
   */
  best(k: number, where?: (agent: SnapshotAgent) => boolean): Candidate[];
  /** How many candidates there are whose agent passes `where` (`ranked.filter(where).length`), without ordering them. */
  count(where?: (agent: SnapshotAgent) => boolean): number;
}

/** A decision over scored agents, materialising each `Candidate` once, when first asked for. */
export class RoutingDecision implements Decision {
  private readonly made: (Candidate | undefined)[];
  private rankedList: Candidate[] | undefined;
  private allList: Candidate[] | undefined;

  constructor(
    private readonly scored: ScoredAgents,
    private readonly load: readonly number[],
    private readonly excluded: readonly number[],
  ) {
    this.made = new Array<Candidate | undefined>(scored.agents.length);
  }

  get ranked(): Candidate[] {
    return (this.rankedList ??= rankAll(this.scored).map((i) => this.candidate(i)));
  }

  get all(): Candidate[] {
    if (!this.allList) {
      const list: Candidate[] = [];
      for (let i = 0; i < this.scored.agents.length; i++) list.push(this.candidate(i));
      this.allList = list;
    }
    return this.allList;
  }

  best(k: number, where?: (agent: SnapshotAgent) => boolean): Candidate[] {
    // Asked for (nearly) all of them: one full ranking is cheaper than taking ties one by one.
    if (this.rankedList || k >= this.scored.open.length) {
      return (where ? this.ranked.filter((c) => where(c.agent)) : this.ranked).slice(
        0,
        Math.max(0, k),
      );
    }
    const agents = this.scored.agents;
    const pass = where ? (i: number) => where(agents[i] as SnapshotAgent) : undefined;
    return rankBest(this.scored, k, pass).map((i) => this.candidate(i));
  }

  count(where?: (agent: SnapshotAgent) => boolean): number {
    if (!where) return this.scored.open.length;
    let n = 0;
    for (const i of this.scored.open) if (where(this.scored.agents[i] as SnapshotAgent)) n++;
    return n;
  }

  private candidate(i: number): Candidate {
    let c = this.made[i];
    if (!c) {
      c = {
        agent: this.scored.agents[i] as SnapshotAgent,
        load: this.load[i] as number,
        score: this.scored.score[i] as number,
      };
      const code = this.excluded[i] as number;
      if (code > 0) c.excluded = EXCLUSIONS[code - 1];
      this.made[i] = c;
    }
    return c;
  }
}
