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
  private readonly points: Uint32Array;
  private readonly owners: Uint16Array | Uint32Array;
  private readonly index: Map<string, number>;
  /** Walk scratch, per owner: `marks[o] === stamp` while owner o is wanted and not yet met. */
  private readonly marks: Uint32Array;
  private readonly slots: Int32Array;
  private stamp = 0;
  private lastList: { agents: readonly object[]; copy: readonly object[]; owners: Int32Array } | undefined;

  constructor(agentIds: readonly string[], virtualNodes: number = VIRTUAL_NODES) {
    const ids = [...new Set(agentIds)].sort();
    if (ids.length > OWNER_SLOTS) throw new RangeError(`a hash ring holds at most ${OWNER_SLOTS} agents, got ${ids.length}`);
    const suffixes = Array.from({ length: virtualNodes }, (_, v) => String(v));
    // Node v of an agent is hash32(`${id}#${v}`); FNV-1a is a running state, so hash the
    // `${id}#` prefix once. Sorting point × 2^21 + owner as plain numbers orders by point, then
    // by id on a collision (ids are sorted), with no per-node object or comparator.
    const keys = new Float64Array(ids.length * virtualNodes);
    let k = 0;
    for (let o = 0; o < ids.length; o++) {
      const prefix = fnv1a('#', fnv1a(ids[o] as string, FNV_OFFSET));
      for (let v = 0; v < virtualNodes; v++) keys[k++] = avalanche(fnv1a(suffixes[v] as string, prefix)) * OWNER_SLOTS + o;
    }
    keys.sort();
    this.points = new Uint32Array(keys.length);
    this.owners = ids.length <= 0x10000 ? new Uint16Array(keys.length) : new Uint32Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as number;
      const owner = key % OWNER_SLOTS;
      this.owners[i] = owner;
      this.points[i] = (key - owner) / OWNER_SLOTS;
    }
    this.ids = ids;
    this.index = new Map(ids.map((id, o) => [id, o]));
    this.marks = new Uint32Array(ids.length);
    this.slots = new Int32Array(ids.length);
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
    if (last && last.agents === agents && last.copy.length === agents.length && sameItems(last.copy, agents)) return last.owners;
    const owners = new Int32Array(agents.length);
    for (let i = 0; i < agents.length; i++) owners[i] = this.indexOf((agents[i] as { agent_id: string }).agent_id);
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
    return this.walk(this.startOf(taskId), owners, limit).map((j) => this.ids[owners[j] as number] as string);
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
