import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  decodeSnapshot,
  type ReachKeys,
  type RegistrySnapshot,
  type SnapshotAgent,
} from '@agent-reach/protocol';
import { HashRing, VIRTUAL_NODES } from '../routing/hash-ring.ts';
import { LiveCounts } from './live-counts.ts';

type State = 'idle' | 'running' | 'closed';

/** What a snapshot holder needs. */
export interface SnapshotHolderOptions {
  redis: RedisClient;
  subscriber: RedisClient;
  keys: ReachKeys;
  intervalMs: number;
  logger: Logger;
}

/**
 * Holds the latest registry snapshot in memory, indexed by capability. Reloads it when
 * registry-sync announces a new version, and every interval looks at the version counter (a few
 * bytes) to catch a lost announcement: the snapshot itself, which grows with the fleet, is read
 * only when the version moved. Keeps the inflight counts the router's own deliveries returned
 * since the snapshot was loaded, which are fresher.
 */
export class SnapshotHolder {
  private snapshot: RegistrySnapshot = { version: 0, written_at: 0, agents: [] };
  private loadedAt = 0;
  private byCapability = new Map<string, SnapshotAgent[]>();
  private byId = new Map<string, SnapshotAgent>();
  private rings = new Map<string, HashRing>();
  /** For a capability whose agents changed, its last ring: the next one is merged from it. */
  private formerRings = new Map<string, HashRing>();
  private readonly live = new LiveCounts();
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly o: SnapshotHolderOptions) {
    this.log = o.logger.child({ module: 'snapshot' });
  }

  /** Loads the first snapshot and starts following new ones. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'running';
    await this.reload();
    this.o.subscriber.on('message', () => void this.reload());
    await this.o.subscriber.subscribe(this.o.keys.snapshotChannel());
    this.timer = setInterval(() => void this.poll(), this.o.intervalMs);
    this.timer.unref();
  }

  /**
   * Reads the snapshot from Redis now. Calls during a read coalesce into one more read after
   * it, so a notification that arrives mid-read is never answered with the older snapshot.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain ??= this.reloading.then(() => {
        this.reloadAgain = undefined;
        return this.reload();
      });
      return this.reloadAgain;
    }
    this.reloading = this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /**
   * The timer's check: the version counter, then the snapshot only if the version is not the one
   * held (or cannot be read). A reload under way reads the newest snapshot anyway.
   */
  private async poll(): Promise<void> {
    if (this.reloading) return;
    try {
      const version = Number(await this.o.redis.get(this.o.keys.snapshotVersion()));
      if (version > 0 && version === this.snapshot.version) {
        // Checked just now: the snapshot held is the newest, as fresh as a reload would make it.
        this.loadedAt = Date.now();
        return;
      }
    } catch {
      // The reload below reads the snapshot itself and logs what fails.
    }
    await this.reload();
  }

  /** One agent of the snapshot. */
  agent(agentId: string): SnapshotAgent | undefined {
    return this.byId.get(agentId);
  }

  /** Agents that declared `capability`. */
  agentsFor(capability: string): readonly SnapshotAgent[] {
    return this.byCapability.get(capability) ?? [];
  }

  /** Every capability an agent of the snapshot declared, whatever its status. */
  capabilities(): IterableIterator<string> {
    return this.byCapability.keys();
  }

  /**
   * The hash ring over the agents of `capability`. Built on first use and kept across reloads
   * while the capability's set of agent ids stays the same (see `keepRings`).
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

  /**
   * Freshest inflight count known for an agent: the last count Redis returned to a delivery
   * (or the snapshot's), plus the deliveries this router has chosen it for and not yet heard
   * back from. Counting choices at once keeps a burst of concurrent submissions from all
   * picking the agent that looked idlest. `decide()` passes its clock, read once per decision,
   * and where the agent sits in the list it was given (`list[index]`), which finds its count
   * without looking its id up.
   */
  inflightOf = (
    agent: SnapshotAgent,
    now?: number,
    index?: number,
    list?: readonly SnapshotAgent[],
  ): number => this.live.inflightOf(agent, now, index, list);

  /** Counts a delivery this router is about to make to `agentId`. */
  reserve(agentId: string): void {
    this.live.reserve(agentId);
  }

  /**
   * Settles a reservation with what Redis answered: `inflight` is the live count after the
   * delivery (undefined when the delivery was refused).
   */
  settle(agentId: string, inflight?: number): void {
    this.live.settle(agentId, inflight);
  }

  /** Records the inflight count Redis returned. */
  noteInflight(agentId: string, inflight: number): void {
    this.live.note(agentId, inflight);
  }

  /** Version and age of the snapshot held. */
  info(): { version: number; age_ms: number; agents: number } {
    return {
      version: this.snapshot.version,
      age_ms: this.loadedAt ? Date.now() - this.loadedAt : -1,
      agents: this.snapshot.agents.length,
    };
  }

  /** Stops following snapshots. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearInterval(this.timer);
    await this.reloading;
    this.o.subscriber.disconnect();
  }

  private async load(): Promise<void> {
    try {
      const next = decodeSnapshot(await this.o.redis.get(this.o.keys.snapshot()));
      this.loadedAt = Date.now();
      if (!next || next.version === this.snapshot.version) return;
      this.snapshot = next;
      const index = new Map<string, SnapshotAgent[]>();
      for (const agent of next.agents) {
        for (const cap of agent.capabilities) {
          let list = index.get(cap);
          if (!list) index.set(cap, (list = []));
          list.push(agent);
        }
      }
      this.byCapability = index;
      this.byId = new Map(next.agents.map((a) => [a.agent_id, a]));
      const { kept, former } = keepRings(this.rings, this.formerRings, index);
      this.rings = kept;
      this.formerRings = former;
      // Reservations in flight survive a new snapshot; the counts it carries are fresher.
      this.live.load(next.agents);
    } catch (err: unknown) {
      this.log.warn({ err }, 'snapshot reload failed; keeping the previous one');
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
