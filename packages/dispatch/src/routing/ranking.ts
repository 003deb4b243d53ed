import type { SnapshotAgent } from '@agent-reach/protocol';
import type { HashRing } from './hash-ring.ts';

/** Scores closer than this are a tie, broken by the ring. */
const EPSILON = 1e-9;

/** Past this many distinct scores, `tieLows` sorts them all instead of inserting each. */
const FEW_DISTINCT = 64;

/** What ranking needs of a filtered, scored capability: indexes refer to `agents`. */
export interface ScoredAgents {
  agents: readonly SnapshotAgent[];
  /** Lower is better, one per agent. */
  score: readonly number[];
  /** The candidates (agents no filter excluded), in `agents` order. */
  open: readonly number[];
  ring: HashRing;
  taskId: string;
  /** The session's agent, put first; -1 when none qualifies. */
  sticky: number;
  /** The agent a retry avoids, put last; -1 when none. */
  avoid: number;
}

/**
 * Every candidate, best first: lowest score first; a run of scores each within EPSILON of the
 * run's lowest is a tie, ordered by one ring walk from the task's point over all tied agents
 * (the ring order of a subset is the subsequence of the ring order of the whole). Then the
 * avoided agent goes last and the sticky one first.
 *
 * No comparator sort of candidates: the ties' lows come from the distinct scores, each candidate
 * is bucketed into its tie, and the walk fills the tied buckets in ring order.
 */
export function rankAll(s: ScoredAgents): number[] {
  const { score, open } = s;
  const m = open.length;
  if (m <= 1) return withStickyAndAvoid(s, [...open]);
  const lows = tieLows(score, open);
  const tieOf = new Array<number>(m);
  const next = new Array<number>(lows.length + 1).fill(0);
  for (let t = 0; t < m; t++) {
    const g = tieIndex(lows, score[open[t] as number] as number);
    tieOf[t] = g;
    (next[g + 1] as number)++;
  }
  // next[g] becomes the first slot of tie g in the output, then the next free one.
  for (let g = 1; g <= lows.length; g++) next[g] = (next[g] as number) + (next[g - 1] as number);
  const sizeOf = (g: number) => (next[g + 1] as number) - (next[g] as number);
  const out = new Array<number>(m);
  const tied: number[] = [];
  const tiedGroup: number[] = [];
  for (let t = 0; t < m; t++) {
    const g = tieOf[t] as number;
    if (sizeOf(g) === 1) out[next[g] as number] = open[t] as number;
    else {
      tied.push(open[t] as number);
      tiedGroup.push(g);
    }
  }
  if (tied.length > 0) {
    const ownerOf = s.ring.ownersOf(s.agents);
    const met = s.ring.walk(
      s.ring.startOf(s.taskId),
      tied.map((i) => ownerOf[i] as number),
    );
    for (const j of met) out[(next[tiedGroup[j] as number] as number)++] = tied[j] as number;
    if (met.length < tied.length) {
      // Agents the ring cannot place end their tie, in score then `agents` order.
      const placed = new Set(met);
      const rest = tied.map((_, j) => j).filter((j) => !placed.has(j));
      rest.sort(
        (x, y) =>
          (score[tied[x] as number] as number) - (score[tied[y] as number] as number) ||
          (tied[x] as number) - (tied[y] as number),
      );
      for (const j of rest) out[(next[tiedGroup[j] as number] as number)++] = tied[j] as number;
    }
  }
  return withStickyAndAvoid(s, out);
}

/**
 * The first `k` of `rankAll(s)` that pass `where`, without ordering the rest: it takes the ties
 * group by group from the lowest score and walks the ring only until it has what it needs.
 */
export function rankBest(
  s: ScoredAgents,
  k: number,
  where: (i: number) => boolean = () => true,
): number[] {
  const out: number[] = [];
  if (k <= 0) return out;
  const { score, open, sticky, avoid } = s;
  if (sticky >= 0 && where(sticky)) out.push(sticky);
  let floor: number | undefined;
  const above = (i: number) => floor === undefined || (score[i] as number) - floor >= EPSILON;
  while (out.length < k) {
    let low = Infinity;
    let any = false;
    for (const i of open) {
      if (above(i) && (!any || (score[i] as number) < low)) {
        low = score[i] as number;
        any = true;
      }
    }
    if (!any) break;
    const members: number[] = [];
    for (const i of open) {
      if (
        above(i) &&
        (score[i] as number) - low < EPSILON &&
        i !== sticky &&
        i !== avoid &&
        where(i)
      )
        members.push(i);
    }
    floor = low;
    const need = k - out.length;
    if (members.length <= 1) out.push(...members);
    else out.push(...ringOrder(s, members, need));
  }
  if (out.length < k && avoid >= 0 && avoid !== sticky && where(avoid)) out.push(avoid);
  return out;
}

/**
 * The first `limit` of `members` in ring order. Agents the ring cannot place (not on it, or a
 * repeated id) follow the placed ones in score, then `agents` order, as in `rankAll`.
 */
function ringOrder(s: ScoredAgents, members: number[], limit: number): number[] {
  const ownerOf = s.ring.ownersOf(s.agents);
  const met = s.ring.walk(
    s.ring.startOf(s.taskId),
    members.map((i) => ownerOf[i] as number),
    limit,
  );
  const out = met.map((j) => members[j] as number);
  if (out.length < limit) {
    const { score } = s;
    const placed = new Set(out);
    const rest = members
      .filter((i) => !placed.has(i))
      .sort((a, b) => (score[a] as number) - (score[b] as number) || a - b);
    for (const i of rest) if (out.length < limit) out.push(i);
  }
  return out;
}

/**
 * The lowest score of each tie, ascending: the distinct scores chained from the lowest, a new tie
 * starting at the first score EPSILON or more above the current tie's low. Loads are small
 * fractions, so a capability's scores are mostly repeats: keeping the distinct ones in a small
 * sorted list is cheaper than sorting every score.
 */
function tieLows(score: readonly number[], open: readonly number[]): number[] {
  let distinct: number[] = [];
  for (const i of open) {
    const v = score[i] as number;
    let lo = 0;
    let hi = distinct.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((distinct[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    if (distinct[lo] === v) continue;
    if (distinct.length === FEW_DISTINCT) {
      distinct = [...new Set(Float64Array.from(open, (j) => score[j] as number).sort())];
      break;
    }
    distinct.splice(lo, 0, v);
  }
  const lows: number[] = [];
  for (let t = 0; t < distinct.length;) {
    const low = distinct[t] as number;
    lows.push(low);
    while (++t < distinct.length && (distinct[t] as number) - low < EPSILON);
  }
  return lows;
}

/** The tie a score belongs to: the last one whose low is at or below it. */
function tieIndex(lows: readonly number[], value: number): number {
  let lo = 0;
  let hi = lows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((lows[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

function withStickyAndAvoid(s: ScoredAgents, order: number[]): number[] {
  const { sticky, avoid } = s;
  if (sticky < 0 && avoid < 0) return order;
  const out: number[] = sticky >= 0 ? [sticky] : [];
  for (const i of order) if (i !== sticky && i !== avoid) out.push(i);
  if (avoid >= 0 && avoid !== sticky) out.push(avoid);
  return out;
}
