import { avalanche, fnv1a, FNV_OFFSET, hash32 } from './hash.ts';

/** Virtual nodes per agent on the ring. More nodes even out the share each agent gets. */
export const VIRTUAL_NODES = 128;

/** Owner indexes share a float64 sort key with the 32-bit point: point × 2^21 + owner < 2^53. */
const OWNER_SLOTS = 2 ** 21;

/**
 * A consistent-hash ring over agent ids with virtual nodes. Used to break ties between agents
 * of equal load: a task_id keeps its agent while loads are equal, and adding one agent to N
 * moves only about 1/(N+1) of task_ids.
 *
 * The ring is a function of the set of ids: the same set in any order gives the same ring.
 * Owners are numbers (an index into `ids`, which is sorted) so a walk touches only typed arrays.
 */
export class HashRing {
  /** The distinct agent ids, sorted; an owner index is a position in this list. */
  readonly ids: readonly string[];
  /** Nodes per agent. */
  readonly virtualNodes: number;
  private readonly points: Uint32Array;
  private readonly owners: Uint16Array | Uint32Array;
  private readonly index: Map<string, number>;
  /** Walk scratch, per owner: `marks[o] === stamp` while owner o is wanted and not yet met. */
  private readonly marks: Uint32Array;
  private readonly slots: Int32Array;
  private stamp = 0;
  private lastList:
    { agents: readonly object[]; copy: readonly object[]; owners: Int32Array } | undefined;

  /**
   * The ring over `agentIds`. With `previous`, a ring over a set that differs by a few ids,
   * the nodes of the agents both share are taken from it instead of hashed and sorted again:
   * the same ring, built in one linear merge (an agent joining a capability of 200 costs under
   * half a millisecond instead of about three).
   */
  constructor(
    agentIds: readonly string[],
    virtualNodes: number = VIRTUAL_NODES,
    previous?: HashRing,
  ) {
    const ids = [...new Set(agentIds)].sort();
    if (ids.length > OWNER_SLOTS)
      throw new RangeError(`a hash ring holds at most ${OWNER_SLOTS} agents, got ${ids.length}`);
    this.ids = ids;
    this.virtualNodes = virtualNodes;
    this.index = new Map(ids.map((id, o) => [id, o]));
    const nodes =
      (previous && merged(previous, ids, this.index, virtualNodes)) ??
      fromKeys(
        nodeKeys(ids, virtualNodes, (o) => o),
        ids.length,
      );
    this.points = nodes.points;
    this.owners = nodes.owners;
    this.marks = new Uint32Array(ids.length);
    this.slots = new Int32Array(ids.length);
  }

  /** The ring's nodes in ring order: each node's point and owner index. */
  nodes(): Readonly<Nodes> {
    return { points: this.points, owners: this.owners };
  }

  /** Number of agents on the ring. */
  get size(): number {
    return this.ids.length;
  }

  /** The owner index of an agent id, or -1 when it is not on the ring. */
  indexOf(agentId: string): number {
    return this.index.get(agentId) ?? -1;
  }

  /** True when the ring is over exactly this set of agent ids (order and repeats aside). */
  hasExactly(agentIds: Iterable<string>): boolean {
    const stamp = this.nextStamp();
    let distinct = 0;
    for (const id of agentIds) {
      const o = this.index.get(id);
      if (o === undefined) return false;
      if (this.marks[o] !== stamp) {
        this.marks[o] = stamp;
        distinct++;
      }
    }
    return distinct === this.ids.length;
  }

  /** Where a task's walk starts: the first node at or after `hash32(taskId)`. */
  startOf(taskId: string): number {
    const point = hash32(taskId);
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.points[mid] as number) < point) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Walks clockwise from node `start` and returns the positions j in `owners` (owner indexes, as
   * `indexOf` gives them) in the order their owners are first met, at most `limit` of them. An
   * entry of -1, or one repeating an earlier entry's owner, is never met. Stops as soon as it has
   * what was asked, so ordering a few among many costs a few steps.
   */
  walk(start: number, owners: ArrayLike<number>, limit: number = owners.length): number[] {
    const out: number[] = [];
    const n = this.points.length;
    if (n === 0 || limit <= 0) return out;
    // Locals, not fields, in the loops: this is the one loop a decision may run a thousand times.
    const { marks, slots, owners: ring } = this;
    const stamp = this.nextStamp();
    let wanted = 0;
    for (let j = 0; j < owners.length; j++) {
      const o = owners[j] as number;
      if (o < 0 || o >= marks.length || marks[o] === stamp) continue;
      marks[o] = stamp;
      slots[o] = j;
      wanted++;
    }
    const want = Math.min(limit, wanted);
    for (let step = 0, i = start % n; step < n && out.length < want; step++) {
      const o = ring[i] as number;
      if (marks[o] === stamp) {
        marks[o] = 0;
        out.push(slots[o] as number);
      }
      if (++i === n) i = 0;
    }
    return out;
  }

  /**
   * The owner index of each agent of `agents` (-1 for one not on the ring). Remembers the last
   * list it was asked about, so the decisions over one snapshot's list look ids up once: a
   * repeated call costs one identity check per agent.
   */
  ownersOf(agents: readonly { readonly agent_id: string }[]): Int32Array {
    const last = this.lastList;
    if (
      last &&
      last.agents === agents &&
      last.copy.length === agents.length &&
      sameItems(last.copy, agents)
    )
      return last.owners;
    const owners = new Int32Array(agents.length);
    for (let i = 0; i < agents.length; i++)
      owners[i] = this.indexOf((agents[i] as { agent_id: string }).agent_id);
    this.lastList = { agents, copy: [...agents], owners };
    return owners;
  }

  /**
   * The agents of `among` in ring order starting at the task's point: the first is the task's
   * owner among them, the next its fallback, and so on. Ids not on the ring are left out.
   */
  order(taskId: string, among: ReadonlySet<string>, limit: number = among.size): string[] {
    const owners: number[] = [];
    for (const id of among) owners.push(this.indexOf(id));
    return this.walk(this.startOf(taskId), owners, limit).map(
      (j) => this.ids[owners[j] as number] as string,
    );
  }

  /** A stamp no owner's mark holds yet; marks are cleared once every 2^32 − 1 walks. */
  private nextStamp(): number {
    if (this.stamp === 0xffffffff) {
      this.marks.fill(0);
      this.stamp = 0;
    }
    return ++this.stamp;
  }
}

function sameItems(a: readonly object[], b: readonly object[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The sorted node keys of `ids`: node v of an agent is hash32(`${id}#${v}`). FNV-1a is a
 * running state, so the `${id}#` prefix is hashed once. Sorting point × 2^21 + owner as plain
 * numbers orders by point, then by id on a collision (ids are sorted), with no per-node object
 * or comparator. `ownerOf` gives the owner index of `ids[o]`.
 */
function nodeKeys(
  ids: readonly string[],
  virtualNodes: number,
  ownerOf: (o: number) => number,
): Float64Array {
  const suffixes = Array.from({ length: virtualNodes }, (_, v) => String(v));
  const keys = new Float64Array(ids.length * virtualNodes);
  let k = 0;
  for (let o = 0; o < ids.length; o++) {
    const prefix = fnv1a('#', fnv1a(ids[o] as string, FNV_OFFSET));
    const owner = ownerOf(o);
    for (let v = 0; v < virtualNodes; v++)
      keys[k++] = avalanche(fnv1a(suffixes[v] as string, prefix)) * OWNER_SLOTS + owner;
  }
  return keys.sort();
}

/** A ring's nodes: parallel arrays of points and owner indexes, in ring order. */
export interface Nodes {
  points: Uint32Array;
  owners: Uint16Array | Uint32Array;
}

function nodesOf(count: number, idCount: number): Nodes {
  return {
    points: new Uint32Array(count),
    owners: idCount <= 0x10000 ? new Uint16Array(count) : new Uint32Array(count),
  };
}

/** Nodes from sorted keys (`point × 2^21 + owner`). */
function fromKeys(keys: Float64Array, idCount: number): Nodes {
  const nodes = nodesOf(keys.length, idCount);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as number;
    const owner = key % OWNER_SLOTS;
    nodes.owners[i] = owner;
    nodes.points[i] = (key - owner) / OWNER_SLOTS;
  }
  return nodes;
}

/** Past this share of ids joined or left, a ring is built from nothing rather than merged. */
const MERGE_LIMIT = 0.25;

/**
 * Below this many agents a ring is built from nothing: the build is a fraction of a millisecond
 * and, run for every capability, the faster while the merge runs too rarely to be compiled.
 */
const MERGE_MIN_AGENTS = 50;

/**
 * The nodes of the ring over `ids` (sorted, distinct; `index` maps each to its owner index), from
 * `previous`: its nodes whose agent stays, renumbered (both id lists are sorted, so renumbering
 * keeps their order on a point collision), merged with the sorted nodes of the agents that
 * joined. The result is what a build from nothing gives. Undefined when too much changed.
 */
function merged(
  previous: HashRing,
  ids: readonly string[],
  index: ReadonlyMap<string, number>,
  virtualNodes: number,
): Nodes | undefined {
  if (previous.virtualNodes !== virtualNodes || ids.length < MERGE_MIN_AGENTS) return undefined;
  const renumber = new Int32Array(previous.size);
  let kept = 0;
  for (let o = 0; o < previous.size; o++) {
    const n = index.get(previous.ids[o] as string);
    renumber[o] = n ?? -1;
    if (n !== undefined) kept++;
  }
  const joined: string[] = [];
  for (const id of ids) if (previous.indexOf(id) < 0) joined.push(id);
  if (joined.length + (previous.size - kept) > MERGE_LIMIT * Math.max(ids.length, previous.size))
    return undefined;
  const added = fromKeys(
    nodeKeys(joined, virtualNodes, (j) => index.get(joined[j] as string) as number),
    ids.length,
  );
  const { points: oldPoints, owners: oldOwners } = previous.nodes();
  const { points: addPoints, owners: addOwners } = added;
  const out = nodesOf(kept * virtualNodes + addPoints.length, ids.length);
  const { points, owners } = out;
  let i = 0;
  let j = 0;
  let k = 0;
  for (;;) {
    while (i < oldPoints.length && (renumber[oldOwners[i] as number] as number) < 0) i++;
    const fromOld = i < oldPoints.length;
    const fromAdded = j < addPoints.length;
    if (!fromOld && !fromAdded) break;
    const p = fromOld ? (oldPoints[i] as number) : 0;
    const o = fromOld ? (renumber[oldOwners[i] as number] as number) : 0;
    const ap = fromAdded ? (addPoints[j] as number) : 0;
    if (fromAdded && (!fromOld || ap < p || (ap === p && (addOwners[j] as number) < o))) {
      points[k] = ap;
      owners[k++] = addOwners[j++] as number;
    } else {
      points[k] = p;
      owners[k++] = o;
      i++;
    }
  }
  return out;
}
