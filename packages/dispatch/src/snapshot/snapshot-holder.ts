import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeSnapshot, type ReachKeys, type RegistrySnapshot, type SnapshotAgent } from '@agent-reach/protocol';
import { HashRing } from '../routing/hash-ring.ts';

type State = 'idle' | 'running' | 'closed';

/**
 * Holds the latest registry snapshot in memory, indexed by capability. Reloads it every
 * interval and when registry-sync announces a new version. Keeps the inflight counts the
 * router's own deliveries returned since the snapshot was loaded, which are fresher.
 */
export class SnapshotHolder {
  private snapshot: RegistrySnapshot = { version: 0, written_at: 0, agents: [] };
  private loadedAt = 0;
  private byCapability = new Map<string, SnapshotAgent[]>();
  private rings = new Map<string, HashRing>();
  private liveInflight = new Map<string, number>();
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

  /** Freshest inflight count known for an agent. */
  inflightOf = (agent: SnapshotAgent): number => this.liveInflight.get(agent.agent_id) ?? agent.inflight;

  /** Records the inflight count a delivery returned. */
  noteInflight(agentId: string, inflight: number): void {
    this.liveInflight.set(agentId, inflight);
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
      this.rings = new Map();
      this.liveInflight = new Map();
    } catch (err: unknown) {
      this.log.warn({ err }, 'snapshot reload failed; keeping the previous one');
    }
  }
}
