import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeSnapshot, type ReachKeys, type RegistrySnapshot, type SnapshotAgent } from '@agent-reach/protocol';
import { HashRing } from '../routing/hash-ring.ts';

type State = 'idle' | 'running' | 'closed';

/** How long a count Redis returned to a delivery is trusted over the snapshot's. */
const LIVE_COUNT_TTL_MS = 250;

/**
 * Holds the latest registry snapshot in memory, indexed by capability. Reloads it every
 * interval and when registry-sync announces a new version. Keeps the inflight counts the
 * router's own deliveries returned since the snapshot was loaded, which are fresher.
 */
export class SnapshotHolder {
  private snapshot: RegistrySnapshot = { version: 0, written_at: 0, agents: [] };
  private loadedAt = 0;
  private byCapability = new Map<string, SnapshotAgent[]>();
  private byId = new Map<string, SnapshotAgent>();
  private rings = new Map<string, HashRing>();
  private live = new Map<string, { base: number; at: number; reserved: number }>();
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly keys: ReachKeys,
    private readonly intervalMs: number,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'snapshot' });
  }

  /** Loads the first snapshot and starts following new ones. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'running';
    await this.reload();
    this.subscriber.on('message', () => void this.reload());
    await this.subscriber.subscribe(this.keys.snapshotChannel());
    this.timer = setInterval(() => void this.reload(), this.intervalMs);
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

  /** One agent of the snapshot. */
  agent(agentId: string): SnapshotAgent | undefined {
    return this.byId.get(agentId);
  }

  /** Agents that declared `capability`. */
  agentsFor(capability: string): readonly SnapshotAgent[] {
    return this.byCapability.get(capability) ?? [];
  }

  /** The hash ring over the agents of `capability`. */
  ringFor(capability: string): HashRing {
    let ring = this.rings.get(capability);
    if (!ring) {
      ring = new HashRing(this.agentsFor(capability).map((a) => a.agent_id));
      this.rings.set(capability, ring);
    }
    return ring;
  }

  /**
   * Freshest inflight count known for an agent: the last count Redis returned to a delivery
   * (or the snapshot's), plus the deliveries this router has chosen it for and not yet heard
   * back from. Counting choices at once keeps a burst of concurrent submissions from all
   * picking the agent that looked idlest.
   */
  inflightOf = (agent: SnapshotAgent): number => {
    const l = this.live.get(agent.agent_id);
    if (!l) return agent.inflight;
    // The router never sees completions: a count older than LIVE_COUNT_TTL_MS may be too high
    // (an agent refused as full stays full in our eyes), so it falls back to the snapshot's.
    const base = Date.now() - l.at < LIVE_COUNT_TTL_MS ? l.base : Math.min(l.base, agent.inflight);
    return base + l.reserved;
  };

  /** Counts a delivery this router is about to make to `agentId`. */
  reserve(agentId: string): void {
    const l = this.live.get(agentId);
    if (l) l.reserved++;
    else this.live.set(agentId, { base: this.baseOf(agentId), at: Date.now(), reserved: 1 });
  }

  /**
   * Settles a reservation with what Redis answered: `inflight` is the live count after the
   * delivery (undefined when the delivery was refused).
   */
  settle(agentId: string, inflight?: number): void {
    const l = this.live.get(agentId);
    if (!l) return;
    l.reserved = Math.max(0, l.reserved - 1);
    if (inflight !== undefined) {
      l.base = inflight;
      l.at = Date.now();
    }
  }

  /** Records the inflight count Redis returned. */
  noteInflight(agentId: string, inflight: number): void {
    const l = this.live.get(agentId);
    if (l) {
      l.base = inflight;
      l.at = Date.now();
    } else this.live.set(agentId, { base: inflight, at: Date.now(), reserved: 0 });
  }

  private baseOf(agentId: string): number {
    return this.byId.get(agentId)?.inflight ?? 0;
  }

  /** Version and age of the snapshot held. */
  info(): { version: number; age_ms: number; agents: number } {
    return { version: this.snapshot.version, age_ms: this.loadedAt ? Date.now() - this.loadedAt : -1, agents: this.snapshot.agents.length };
  }

  /** Stops following snapshots. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearInterval(this.timer);
    await this.reloading;
    this.subscriber.disconnect();
  }

  private async load(): Promise<void> {
    try {
      const next = decodeSnapshot(await this.redis.get(this.keys.snapshot()));
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
      this.rings = new Map();
      // Reservations in flight survive a new snapshot; the counts it carries are fresher.
      const reserved = new Map([...this.live].filter(([, l]) => l.reserved > 0));
      this.live = new Map();
      for (const [id, l] of reserved) this.live.set(id, { base: this.byId.get(id)?.inflight ?? l.base, at: Date.now(), reserved: l.reserved });
    } catch (err: unknown) {
      this.log.warn({ err }, 'snapshot reload failed; keeping the previous one');
    }
  }
}
