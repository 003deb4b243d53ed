import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';

/** How often an agent that keeps beating is listed again, ms. */
export const RELIST_MS = 30_000;

/** Past this many remembered agents the memory starts over (agents removed are never told). */
const MAX_REMEMBERED = 100_000;

/**
 * Keeps agents that beat in the set of agents (`keys.agents()`), which the sweeps and snapshots
 * read. Registration lists an agent; the set can still lose one whose record lives — the lease
 * sweep removes an id whose record it found gone just as the agent registered again — and a
 * heartbeat puts it back. Listing on every beat cost a command per heartbeat for an answer that
 * is almost always "already there": this lists an agent the first time this process sees it
 * beat, when its status changes, and then at most every {@link RELIST_MS}.
 */
export class AgentListing {
  private readonly listedAt = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
    private readonly relistMs = RELIST_MS,
  ) {}

  /** Notes that `agentId` was just listed (a registration added it). */
  listed(agentId: string, nowMs = performance.now()): void {
    if (this.listedAt.size >= MAX_REMEMBERED && !this.listedAt.has(agentId)) this.listedAt.clear();
    this.listedAt.set(agentId, nowMs);
  }

  /** Whether a beat of `agentId` should list it again; `changed`: its status changed. */
  due(agentId: string, changed: boolean, nowMs = performance.now()): boolean {
    if (changed) return true;
    const at = this.listedAt.get(agentId);
    return at === undefined || nowMs - at >= this.relistMs;
  }

  /** Lists the agents among `beats` that are due, in one command; none due: no command. */
  async keep(beats: readonly { agentId: string; changed: boolean }[]): Promise<void> {
    const now = performance.now();
    const due = beats.filter((b) => this.due(b.agentId, b.changed, now)).map((b) => b.agentId);
    if (due.length === 0) return;
    await this.redis.sadd(this.keys.agents(), ...due);
    for (const id of due) this.listed(id, now);
  }
}
