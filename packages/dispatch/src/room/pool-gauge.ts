import type { RedisClient } from '@agent-reach/service-kit/redis';
import { DEFAULT_TENANT, poolStreams, WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { isPull, type Decision } from '../routing/policy.ts';
import { poolDepthScript } from './room-scripts.ts';

/** How long a pool's depth read from Redis is used before it is read again, ms. */
const FRESH_MS = 20;

/**
 * Entries a pool may hold, waiting or being worked, for `slots` slots of the pull agents that read
 * it: every slot busy and as many entries again waiting, so an agent that frees a slot finds its
 * next task at once while the rest wait in the room, in fair order.
 */
export function poolBound(slots: number): number {
  return Math.max(2, 2 * slots);
}

/** Why a pull agent may be left out of a decision and still read its pool. */
const STILL_READS: ReadonlySet<string> = new Set(['full', 'watermark', 'suspect', 'degraded']);

/**
 * The slots of the pull agents that read the pool of `tenant` for a decision's capability: its
 * agents of that tenant that serve the task (a candidate, or left out only for being busy or
 * unwell). A pull agent reads only its own tenant's pools. 0: no pull agent reads it.
 */
export function pullSlots(decision: Decision, tenant: string): number {
  let slots = 0;
  for (const c of decision.all) {
    if (!isPull(c.agent) || (c.agent.tenant || DEFAULT_TENANT) !== (tenant || DEFAULT_TENANT))
      continue;
    if (c.excluded && !STILL_READS.has(c.excluded)) continue;
    slots += c.agent.max_concurrency;
  }
  return slots;
}

/** A pool's depth as read from Redis, and when the read began. */
interface Reading {
  depth: number;
  at: number;
}

/** This process's adds to one pool that a read may not show yet. */
interface Adds {
  /** Adds counted whose send has not ended: no read shows them. */
  sending: number;
  /** When counted adds ended (written or not), kept while a read may have missed them. */
  ended: number[];
}

/** Ends one counted add to a pool: call it once its send has ended, written or not. */
export type AddEnded = () => void;

/**
 * How deep a capability's pools are: over all their bands, the entries handed out to pull agents
 * and not yet acknowledged (tasks being worked) and those not yet handed out (tasks waiting),
 * pool-depth-3.lua. The room keeps
 * a pool within {@link poolBound} of its readers' slots, so the order tasks leave the pool in is
 * the room's fair order, not the order they arrived in. A depth is read at most every 20 ms per
 * pool and process; this process's adds are counted on top of it while a read may miss them:
 * those still being sent, and those that ended since the read began.
 */
export class PoolGauge {
  private readonly seen = new Map<string, Reading>();
  private readonly reading = new Map<string, Promise<Reading>>();
  private readonly adds = new Map<string, Adds>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
  ) {}

  /**
   * Counts one more task into pool `poolId`, read by pull agents with `slots` slots in all, when
   * it holds less than its bound: the function to call once the task's send has ended; undefined
   * when the pool is full. Concurrent calls share one read and are counted one by one after it,
   * so a burst cannot all see the same free room, and a send slower than a read is not missed.
   */
  async tryAdd(poolId: string, slots: number): Promise<AddEnded | undefined> {
    const bound = poolBound(slots);
    const read = await this.fresh(poolId, bound);
    const adds = this.addsTo(poolId);
    adds.ended = adds.ended.filter((at) => at >= read.at);
    if (read.depth + adds.sending + adds.ended.length >= bound) return undefined;
    adds.sending++;
    let over = false;
    return () => {
      if (over) return;
      over = true;
      adds.sending--;
      adds.ended.push(Date.now());
    };
  }

  private addsTo(poolId: string): Adds {
    let adds = this.adds.get(poolId);
    if (!adds) this.adds.set(poolId, (adds = { sending: 0, ended: [] }));
    return adds;
  }

  /** Reads every pool's depth again at its next use (a pooled task was settled). */
  forget(): void {
    this.seen.clear();
  }

  /**
   * Pool `poolId`'s depth, at most 20 ms old. `most`: waiting entries are counted up to this many
   * per band when Redis has no lag for them.
   */
  private fresh(poolId: string, most: number): Promise<Reading> {
    const s = this.seen.get(poolId);
    if (s && Date.now() - s.at < FRESH_MS) return Promise.resolve(s);
    let reading = this.reading.get(poolId);
    if (!reading) {
      reading = this.read(poolId, most).finally(() => this.reading.delete(poolId));
      this.reading.set(poolId, reading);
    }
    return reading;
  }

  private async read(poolId: string, most: number): Promise<Reading> {
    const at = Date.now();
    const [high, mid, low] = poolStreams(this.keys, poolId) as [string, string, string];
    const depth = await poolDepthScript.run(this.redis, {
      keys: { high, mid, low },
      args: { group: WORKER_GROUP, most },
    });
    if (this.seen.size > 10_000) this.seen.clear();
    if (this.adds.size > 10_000) this.forgetIdleAdds();
    const s = { depth, at };
    this.seen.set(poolId, s);
    return s;
  }

  /** Drops the add counts of pools with no send under way (a process that fed many pools). */
  private forgetIdleAdds(): void {
    for (const [poolId, adds] of this.adds) if (adds.sending === 0) this.adds.delete(poolId);
  }
}
