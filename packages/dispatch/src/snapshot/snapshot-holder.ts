import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  decodeSnapshot,
  decodeSnapshotDelta,
  type ReachKeys,
  type SnapshotAgent,
} from '@agent-reach/protocol';
import type { HashRing } from '../routing/hash-ring.ts';
import { AgentIndex } from './agent-index.ts';
import { LiveCounts } from './live-counts.ts';

type State = 'idle' | 'running' | 'closed';

/** Deltas read per round trip while catching up. */
const DELTAS_PER_READ = 500;
/** Full reloads one sync may need when full snapshots keep coming between its reads. */
const SYNC_ROUNDS = 3;

/** What a snapshot holder needs. */
export interface SnapshotHolderOptions {
  redis: RedisClient;
  subscriber: RedisClient;
  keys: ReachKeys;
  intervalMs: number;
  logger: Logger;
}

/**
 * Holds the registry in memory, indexed by capability (`AgentIndex`), in step with the version
 * registry-sync writes (docs/PROTOCOL.md §8). When registry-sync announces a new version, and
 * every interval when the version counter (a few bytes) moved, it reads the deltas after the
 * version it holds and applies them — the agents that changed, nothing else; where a version has
 * no delta (a full snapshot was written, or the deltas were trimmed) it reads the full snapshot
 * and goes on from there. Keeps the inflight counts the router's own deliveries returned since,
 * which are fresher.
 */
export class SnapshotHolder {
  private version = 0;
  private loadedAt = 0;
  private readonly index = new AgentIndex();
  private readonly live = new LiveCounts();
  private state: State = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain: Promise<void> | undefined;
  private readonly counts = { full: 0, delta: 0 };
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
   * Catches up with the newest version now. Calls during a read coalesce into one more read
   * after it, so a notification that arrives mid-read is never answered with an older version.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain ??= this.reloading.then(() => {
        this.reloadAgain = undefined;
        return this.reload();
      });
      return this.reloadAgain;
    }
    this.reloading = this.sync().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /**
   * The timer's check: the version counter, then a catch-up only if the version is not the one
   * held (or cannot be read).
   */
  private async poll(): Promise<void> {
    if (this.reloading) return;
    try {
      const version = Number(await this.o.redis.get(this.o.keys.snapshotVersion()));
      if (version > 0 && version === this.version) {
        // Checked just now: the registry held is the newest, as fresh as a reload would make it.
        this.loadedAt = Date.now();
        return;
      }
    } catch {
      // The catch-up below reads again and logs what fails.
    }
    await this.reload();
  }

  /** One agent of the registry. */
  agent(agentId: string): SnapshotAgent | undefined {
    return this.index.agent(agentId);
  }

  /** Agents that declared `capability`. */
  agentsFor(capability: string): readonly SnapshotAgent[] {
    return this.index.agentsFor(capability);
  }

  /** Every capability an agent of the registry declared, whatever its status. */
  capabilities(): IterableIterator<string> {
    return this.index.capabilities();
  }

  /**
   * The hash ring over the agents of `capability`. Built on first use and kept while the
   * capability's set of agent ids stays the same.
   */
  ringFor(capability: string): HashRing {
    return this.index.ringFor(capability);
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

  /** Version and age of the registry held, its agents, and the full loads and deltas applied. */
  info(): { version: number; age_ms: number; agents: number; full_loads: number; deltas: number } {
    return {
      version: this.version,
      age_ms: this.loadedAt ? Date.now() - this.loadedAt : -1,
      agents: this.index.size,
      full_loads: this.counts.full,
      deltas: this.counts.delta,
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

  /**
   * Reads the deltas after the version held and applies them; where one is missing, loads the
   * full snapshot and goes on from its version. A failure keeps what is held.
   */
  private async sync(): Promise<void> {
    try {
      for (let round = 0; round < SYNC_ROUNDS; round++) {
        // From version 0 the deltas from the first on are the whole registry, when they are all kept.
        if (await this.applyDeltas()) return;
        const held = this.version;
        await this.loadFull();
        if (this.version === held) return;
      }
    } catch (err: unknown) {
      this.log.warn({ err }, 'snapshot reload failed; keeping the previous one');
    }
  }

  /**
   * Applies the deltas after the version held, in order; true when that reached the version the
   * counter showed, false at a version with no delta (a full snapshot, or trimmed away).
   */
  private async applyDeltas(): Promise<boolean> {
    const { redis, keys } = this.o;
    for (;;) {
      // One connection, in order: the counter is read before the deltas that reach it.
      const versionKey = keys.snapshotVersion();
      const deltasKey = keys.snapshotDeltas();
      const from = `${this.version + 1}-0`;
      const [counter, entries] = await Promise.all([
        redis.get(versionKey),
        redis.xrange(deltasKey, from, '+', 'COUNT', DELTAS_PER_READ),
      ]);
      const target = Number(counter);
      for (const [id, fields] of entries) {
        const delta = decodeSnapshotDelta(id, fields);
        if (!delta || delta.version !== this.version + 1) return false;
        this.index.apply(delta);
        this.live.patch(delta.agents);
        this.version = delta.version;
        this.counts.delta++;
      }
      this.loadedAt = Date.now();
      // No counter (a snapshot written without one): only the full snapshot says where it stands.
      if (entries.length < DELTAS_PER_READ) return target > 0 && target <= this.version;
    }
  }

  private async loadFull(): Promise<void> {
    const next = decodeSnapshot(await this.o.redis.get(this.o.keys.snapshot()));
    this.loadedAt = Date.now();
    if (!next || next.version === this.version) return;
    this.version = next.version;
    this.index.load(next.agents);
    // Reservations in flight survive a new snapshot; the counts it carries are fresher.
    this.live.load(next.agents);
    this.counts.full++;
  }
}
