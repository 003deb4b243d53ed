import { hash32 } from './hash.ts';

/** Virtual nodes per agent on the ring. More nodes even out the share each agent gets. */
export const VIRTUAL_NODES = 128;

/**
 * A consistent-hash ring over agent ids with virtual nodes. Used to break ties between agents
 * of equal load: a task_id keeps its agent while loads are equal, and adding one agent to N
 * moves only about 1/(N+1) of task_ids.
 */
export class HashRing {
  private readonly points: Uint32Array;
  private readonly owners: string[];

  constructor(agentIds: readonly string[], virtualNodes: number = VIRTUAL_NODES) {
    const nodes: { point: number; owner: string }[] = [];
    for (const id of agentIds) {
      for (let v = 0; v < virtualNodes; v++) nodes.push({ point: hash32(`${id}#${v}`), owner: id });
    }
    nodes.sort((a, b) => a.point - b.point || (a.owner < b.owner ? -1 : 1));
    this.points = Uint32Array.from(nodes, (n) => n.point);
    this.owners = nodes.map((n) => n.owner);
  }

  /** Number of agents on the ring. */
  get size(): number {
    return new Set(this.owners).size;
  }

  /**
   * The agents of `among` in ring order starting at the task's point: the first is the task's
   * owner among them, the next its fallback, and so on.
   */
  order(taskId: string, among: ReadonlySet<string>): string[] {
    const out: string[] = [];
    const n = this.points.length;
    if (n === 0 || among.size === 0) return out;
    const seen = new Set<string>();
    let i = this.lowerBound(hash32(taskId));
    for (let step = 0; step < n && out.length < among.size; step++, i++) {
      const owner = this.owners[i % n] as string;
      if (among.has(owner) && !seen.has(owner)) {
        seen.add(owner);
        out.push(owner);
      }
    }
    return out;
  }

  private lowerBound(point: number): number {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.points[mid] as number) < point) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
