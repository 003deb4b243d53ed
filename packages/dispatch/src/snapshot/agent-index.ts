import type { SnapshotAgent, SnapshotDelta } from '@agent-reach/protocol';
import { HashRing, VIRTUAL_NODES } from '../routing/hash-ring.ts';

/**
 * The agents of the registry a process holds, by id and by capability, with a hash ring per
 * capability. Loaded whole from a full snapshot, or changed by a delta: a delta rebuilds only the
 * lists of the capabilities its agents declare (or declared), and a ring only where the set of
 * agents of its capability changed — a status change of one agent touches no ring at all.
 */
export class AgentIndex {
  private byCapability = new Map<string, readonly SnapshotAgent[]>();
  private byId = new Map<string, SnapshotAgent>();
  private rings = new Map<string, HashRing>();
  /** For a capability whose agents changed, its last ring: the next one is merged from it. */
  private formerRings = new Map<string, HashRing>();

  /** How many agents it holds. */
  get size(): number {
    return this.byId.size;
  }

  agent(agentId: string): SnapshotAgent | undefined {
    return this.byId.get(agentId);
  }

  agentsFor(capability: string): readonly SnapshotAgent[] {
    return this.byCapability.get(capability) ?? [];
  }

  capabilities(): IterableIterator<string> {
    return this.byCapability.keys();
  }

  /**
   * The hash ring over the agents of `capability`. Built on first use and kept while the
   * capability's set of agent ids stays the same.
   */
  ringFor(capability: string): HashRing {
    let ring = this.rings.get(capability);
    if (!ring) {
      ring = new HashRing(
        this.agentsFor(capability).map((a) => a.agent_id),
        VIRTUAL_NODES,
        this.formerRings.get(capability),
      );
      this.formerRings.delete(capability);
      this.rings.set(capability, ring);
    }
    return ring;
  }

  /** Starts over with the agents of a full snapshot. */
  load(agents: readonly SnapshotAgent[]): void {
    const index = new Map<string, SnapshotAgent[]>();
    for (const agent of agents) {
      for (const cap of agent.capabilities) {
        let list = index.get(cap);
        if (!list) index.set(cap, (list = []));
        list.push(agent);
      }
    }
    this.byCapability = index;
    this.byId = new Map(agents.map((a) => [a.agent_id, a]));
    const { kept, former } = keepRings(this.rings, this.formerRings, index);
    this.rings = kept;
    this.formerRings = former;
  }

  /**
   * Applies a delta: its agents replace (or join) those of the same id, its removed ids leave.
   * The lists of the capabilities touched are new arrays; the others stay the same objects.
   */
  apply(delta: Pick<SnapshotDelta, 'agents' | 'removed'>): void {
    const touched = new Set<string>();
    const changed = new Set<string>();
    for (const id of delta.removed) {
      const old = this.byId.get(id);
      if (!old) continue;
      this.byId.delete(id);
      changed.add(id);
      for (const cap of old.capabilities) touched.add(cap);
    }
    for (const agent of delta.agents) {
      const old = this.byId.get(agent.agent_id);
      for (const cap of old?.capabilities ?? []) touched.add(cap);
      for (const cap of agent.capabilities) touched.add(cap);
      this.byId.set(agent.agent_id, agent);
      changed.add(agent.agent_id);
    }
    for (const cap of touched) this.rebuild(cap, changed);
  }

  /** The list of `capability` after the agents in `changed` changed, and its ring if need be. */
  private rebuild(capability: string, changed: ReadonlySet<string>): void {
    const before = this.byCapability.get(capability) ?? [];
    const list: SnapshotAgent[] = [];
    const seen = new Set<string>();
    let members = false;
    for (const old of before) {
      const now = changed.has(old.agent_id) ? this.byId.get(old.agent_id) : old;
      if (now && !seen.has(now.agent_id) && now.capabilities.includes(capability)) {
        list.push(now);
        seen.add(now.agent_id);
      } else members = true;
    }
    for (const id of changed) {
      const agent = this.byId.get(id);
      if (agent && !seen.has(id) && agent.capabilities.includes(capability)) {
        list.push(agent);
        seen.add(id);
        members = true;
      }
    }
    if (list.length === 0) {
      this.byCapability.delete(capability);
      this.rings.delete(capability);
      this.formerRings.delete(capability);
      return;
    }
    this.byCapability.set(capability, list);
    const ring = this.rings.get(capability);
    if (members && ring) {
      this.rings.delete(capability);
      this.formerRings.set(capability, ring);
    }
  }
}

/**
 * The rings of `previous` whose capability has the same set of agent ids in `index` (`kept`), and
 * for each other capability still served, the ring its next one is merged from (`former`). A
 * reload every few seconds usually changes loads, not membership, and a ring over 200 agents is
 * 25,600 hashed points: a ring whose membership did not change is kept, and one whose did is
 * merged from its former self when first used, which costs a linear pass, not a rebuild.
 */
function keepRings(
  previous: ReadonlyMap<string, HashRing>,
  formerRings: ReadonlyMap<string, HashRing>,
  index: ReadonlyMap<string, readonly SnapshotAgent[]>,
): { kept: Map<string, HashRing>; former: Map<string, HashRing> } {
  const kept = new Map<string, HashRing>();
  const former = new Map<string, HashRing>();
  for (const [capability, ring] of formerRings)
    if (index.has(capability)) former.set(capability, ring);
  for (const [capability, ring] of previous) {
    const agents = index.get(capability);
    if (!agents) continue;
    if (ring.size <= agents.length && ring.hasExactly(agents.map((a) => a.agent_id)))
      kept.set(capability, ring);
    else former.set(capability, ring);
  }
  return { kept, former };
}
