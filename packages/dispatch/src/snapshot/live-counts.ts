import type { SnapshotAgent } from '@agent-reach/protocol';

/** How long a count Redis returned to a delivery is trusted over the snapshot's. */
const LIVE_COUNT_TTL_MS = 250;

interface Live {
  base: number;
  at: number;
  reserved: number;
}

/**
 * The inflight counts the router learned since the snapshot was loaded: the count Redis returned
 * to its last delivery to an agent, and the deliveries chosen for it and not yet answered.
 *
 * Kept in typed arrays by the agent's position in the snapshot (its slot). A decision reads the
 * count of each of its ~200 agents: through a Map of 10,000 ids that was a third of the
 * decision's time (cache misses), through the slot it is an array read. `decide()` passes each
 * agent's index in its list, so the slot is found without looking the id up; any other caller,
 * and an agent of an older snapshot, is found by id.
 */
export class LiveCounts {
  private agents: SnapshotAgent[] = [];
  private slotOf = new Map<string, number>();
  /** Per slot; NaN where the agent has no live count. */
  private base = new Float64Array(0);
  private at = new Float64Array(0);
  private reserved = new Float64Array(0);
  /** Agents new since the snapshot, from deltas: counted by id. */
  private added = new Map<string, SnapshotAgent>();
  /** Counts of ids not in the snapshot: a delivery to an agent that has just left it. */
  private orphans = new Map<string, Live>();
  /** The slots of the agents of a list handed to `decide()`, by position. */
  private listSlots = new WeakMap<readonly SnapshotAgent[], Int32Array>();
  private lastList: readonly SnapshotAgent[] | undefined;
  private lastSlots: Int32Array = new Int32Array(0);

  /**
   * Starts over with a new snapshot's agents. Reservations in flight survive, based on the new
   * snapshot's count (it is fresher than any count heard before it).
   */
  load(agents: readonly SnapshotAgent[]): void {
    const now = Date.now();
    const carried = new Map<string, Live>();
    for (const [id, l] of this.orphans) if (l.reserved > 0) carried.set(id, l);
    for (let s = 0; s < this.agents.length; s++) {
      if ((this.reserved[s] as number) > 0) {
        carried.set((this.agents[s] as SnapshotAgent).agent_id, {
          base: this.base[s] as number,
          at: now,
          reserved: this.reserved[s] as number,
        });
      }
    }
    const n = agents.length;
    const buffer = new Float64Array(3 * n);
    this.base = buffer.subarray(0, n).fill(NaN);
    this.at = buffer.subarray(n, 2 * n);
    this.reserved = buffer.subarray(2 * n);
    this.agents = [...agents];
    this.slotOf = new Map(agents.map((a, s) => [a.agent_id, s]));
    this.orphans = new Map();
    this.added = new Map();
    this.listSlots = new WeakMap();
    this.lastList = undefined;
    for (const [id, l] of carried) {
      const s = this.slotOf.get(id);
      const base = s === undefined ? l.base : (agents[s] as SnapshotAgent).inflight;
      this.set(id, { base, at: now, reserved: l.reserved });
    }
  }

  /**
   * Takes the agents of a delta in place of those of the same id. A changed agent's count is its
   * delta's, fresher than any heard before it, and its reservations in flight stay on top; an
   * agent new since the snapshot is counted by id.
   */
  patch(agents: readonly SnapshotAgent[]): void {
    const now = Date.now();
    for (const agent of agents) {
      const s = this.slotOf.get(agent.agent_id);
      if (s === undefined) {
        this.added.set(agent.agent_id, agent);
        continue;
      }
      this.agents[s] = agent;
      const reserved = this.reserved[s] as number;
      this.base[s] = reserved > 0 ? agent.inflight : NaN;
      this.at[s] = now;
    }
  }

  /**
   * The freshest count for an agent; see `SnapshotHolder.inflightOf`. With `index` and `list`
   * (the agent is `list[index]`) the agent's slot is found by position.
   */
  inflightOf(
    agent: SnapshotAgent,
    now?: number,
    index?: number,
    list?: readonly SnapshotAgent[],
  ): number {
    let s = list !== undefined && index !== undefined ? (this.slotsOf(list)[index] ?? -1) : -1;
    if (s < 0 || this.agents[s] !== agent) s = this.slotOf.get(agent.agent_id) ?? -1;
    let base: number;
    let at: number;
    let reserved: number;
    if (s >= 0) {
      base = this.base[s] as number;
      if (Number.isNaN(base)) return agent.inflight;
      at = this.at[s] as number;
      reserved = this.reserved[s] as number;
    } else {
      const l = this.orphans.get(agent.agent_id);
      if (!l) return agent.inflight;
      ({ base, at, reserved } = l);
    }
    // The router never sees completions: a count older than LIVE_COUNT_TTL_MS may be too high
    // (an agent refused as full stays full in our eyes), so it falls back to the snapshot's.
    // A live count at or below the snapshot's wins either way: no clock read for it.
    const counted =
      base <= agent.inflight || (now ?? Date.now()) - at < LIVE_COUNT_TTL_MS
        ? base
        : agent.inflight;
    return counted + reserved;
  }

  /** Counts a delivery about to be made to `agentId`. */
  reserve(agentId: string): void {
    const l = this.get(agentId);
    if (l) this.set(agentId, { ...l, reserved: l.reserved + 1 });
    else this.set(agentId, { base: this.snapshotCount(agentId), at: Date.now(), reserved: 1 });
  }

  /** Settles a reservation; `inflight` is the count Redis answered, if it did. */
  settle(agentId: string, inflight?: number): void {
    const l = this.get(agentId);
    if (!l) return;
    const reserved = Math.max(0, l.reserved - 1);
    this.set(
      agentId,
      inflight === undefined ? { ...l, reserved } : { base: inflight, at: Date.now(), reserved },
    );
  }

  /** Records the count Redis returned. */
  note(agentId: string, inflight: number): void {
    const l = this.get(agentId);
    this.set(agentId, { base: inflight, at: Date.now(), reserved: l?.reserved ?? 0 });
  }

  private snapshotCount(agentId: string): number {
    const s = this.slotOf.get(agentId);
    if (s === undefined) return this.added.get(agentId)?.inflight ?? 0;
    return (this.agents[s] as SnapshotAgent).inflight;
  }

  private get(agentId: string): Live | undefined {
    const s = this.slotOf.get(agentId);
    if (s === undefined) return this.orphans.get(agentId);
    const base = this.base[s] as number;
    return Number.isNaN(base)
      ? undefined
      : { base, at: this.at[s] as number, reserved: this.reserved[s] as number };
  }

  private set(agentId: string, l: Live): void {
    const s = this.slotOf.get(agentId);
    if (s === undefined) {
      this.orphans.set(agentId, l);
      return;
    }
    this.base[s] = l.base;
    this.at[s] = l.at;
    this.reserved[s] = l.reserved;
  }

  /** Slot of each agent of `list`, by position (-1 for one not in the snapshot), worked out once per list. */
  private slotsOf(list: readonly SnapshotAgent[]): Int32Array {
    if (list === this.lastList) return this.lastSlots;
    let slots = this.listSlots.get(list);
    if (!slots) {
      slots = Int32Array.from(list, (a) => this.slotOf.get(a.agent_id) ?? -1);
      this.listSlots.set(list, slots);
    }
    this.lastList = list;
    this.lastSlots = slots;
    return slots;
  }
}
