import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import { decide, type Decision } from '../routing/policy.ts';
import { recountFree, type FreeSlots } from './recount.ts';
import type { SnapshotHolder } from './snapshot-holder.ts';

/** What a waiter shares with other processes that compete for the same slots. */
export interface CapacityWaiterHooks {
  /** Called on every pass of a capability's loop and once it ends, to say who waits (the holder knows). */
  announce?: (capability: string) => Promise<unknown>;
  /** Freed slots to leave to others, re-read on every pass. */
  reserved?: (capability: string) => Promise<number>;
}

interface Waiter {
  /** Lets it go with `slots` free slots to take (0: not admitted). */
  settle: (slots: number) => void;
  timer: NodeJS.Timeout;
  /** The task's priority, 0–9: a queue is kept highest first, FIFO within a priority. */
  priority: number;
  /** The most slots it takes at once. */
  most: number;
}

/** Puts `w` after every waiter of its priority or higher: highest first, FIFO within a priority. */
function enqueue(queue: Waiter[], w: Waiter): void {
  let i = queue.length;
  while (i > 0 && (queue[i - 1] as Waiter).priority < w.priority) i--;
  queue.splice(i, 0, w);
}

/** Free slots of a decision's candidates by the counts held (at least 1: a candidate has room). */
function openSlots(decision: Decision, snapshot: SnapshotHolder): number {
  let free = 0;
  for (const c of decision.ranked)
    free += Math.max(0, c.agent.max_concurrency - snapshot.inflightOf(c.agent));
  return Math.max(1, free);
}

/**
 * The slots the waiters of a queue ask for in all, counted no further than `cap`: a queue of
 * held submissions may be thousands long, and a pass never hands out more than the free slots.
 */
function wanted(queue: readonly Waiter[], cap: number): number {
  let n = 0;
  for (const w of queue) {
    n += w.most;
    if (n >= cap) return cap;
  }
  return n;
}

/** First and last pause between two recounts of a capability, ms (doubling while nothing frees). */
const FIRST_PAUSE_MS = 2;
const LAST_PAUSE_MS = 20;

/** What a capacity waiter needs. */
export interface CapacityWaiterOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** @default {} */
  hooks?: CapacityWaiterHooks;
  /**
   * Tasks waiting per capability at most; past it, a wait answers false at once.
   * @default 10_000
   */
  maxWaiting?: number;
}

/**
 * Holds, for a short while, tasks that found every agent of their capability at capacity. One
 * loop per capability reads the true inflight counts of its agents (the length of their pending
 * hashes) every few milliseconds and lets the waiting tasks go, highest priority first and oldest
 * first within a priority, one per free slot;
 * neither the router nor registry-sync sees completions otherwise.
 *
 * The router holds a submission here before it answers 429: a burst or a pause (a collection, a
 * slow agent) is absorbed, and an overload that lasts still gets 429 once the wait is over.
 * Answering at once turns an overload into a retry storm: a refused submission sent again costs
 * the router as much as one accepted. Registry-sync parks a retry here that found every agent
 * busy, so it is delivered as soon as a slot frees, not at its next sweep.
 */
export class CapacityWaiter {
  private readonly hooks: CapacityWaiterHooks;
  private readonly maxWaiting: number;
  private readonly queues = new Map<string, Waiter[]>();
  /** Capability → ends its loop's current pause (a slot is known to have freed). */
  private readonly wakers = new Map<string, () => void>();
  private closed = false;

  constructor(private readonly o: CapacityWaiterOptions) {
    this.hooks = o.hooks ?? {};
    this.maxWaiting = o.maxWaiting ?? 10_000;
  }

  /**
   * Free slots of `capability` beyond those left to others, after reading the true counts of the
   * agents `decision` counted full: what a task may take now instead of waiting.
   */
  async room(capability: string, decision: Decision): Promise<number> {
    return (await this.recount(capability, decision)).free;
  }

  /**
   * {@link room}, and the free slots Redis' counts alone show beyond those left to others: more
   * when deliveries this process has chosen are still on their way (they take the difference).
   */
  async recount(capability: string, decision: Decision): Promise<FreeSlots> {
    const found = await recountFree(this.o.redis, this.o.keys, this.o.snapshot, decision);
    if (found.inRedis === 0 || !this.hooks.reserved) return found;
    const left = await this.hooks.reserved(capability);
    return {
      free: Math.max(0, found.free - left),
      inRedis: Math.max(0, found.inRedis - left),
    };
  }

  private async beyondReserved(capability: string, free: number): Promise<number> {
    if (free === 0 || !this.hooks.reserved) return free;
    return Math.max(0, free - (await this.hooks.reserved(capability)));
  }

  /**
   * Resolves true when a slot of `capability` may have freed, false after `timeoutMs` or at close.
   * A task of a higher `priority` (0–9) is let go before every lower one waiting.
   */
  wait(capability: string, timeoutMs: number, priority = 0): Promise<boolean> {
    return this.slots(capability, timeoutMs, 1, priority).then((slots) => slots > 0);
  }

  /**
   * Resolves with how many slots of `capability` may have freed for this waiter, 1 to `most`,
   * when some did; 0 after `timeoutMs` or at close. The free slots a pass sees are handed out in
   * queue order, each waiter taking as many as it asked for: one waiter that takes many (a
   * waiting room's lane) moves a burst of freed slots in one step.
   */
  slots(capability: string, timeoutMs: number, most: number, priority = 0): Promise<number> {
    let queue = this.queues.get(capability);
    if (this.closed || timeoutMs <= 0 || (queue?.length ?? 0) >= this.maxWaiting)
      return Promise.resolve(0);
    const fresh = queue === undefined;
    if (!queue) this.queues.set(capability, (queue = []));
    const q = queue;
    return new Promise<number>((resolve) => {
      const waiter: Waiter = {
        settle: (slots) => {
          clearTimeout(waiter.timer);
          resolve(slots);
        },
        timer: setTimeout(() => {
          const i = q.indexOf(waiter);
          if (i >= 0) q.splice(i, 1);
          resolve(0);
        }, timeoutMs),
        priority,
        most: Math.max(1, Math.floor(most)),
      };
      enqueue(q, waiter);
      if (fresh) void this.watch(capability, q);
    });
  }

  /**
   * Says a slot of `capability` freed (registry-sync applied a completion): its loop looks at the
   * counts now instead of after its pause.
   */
  poke(capability: string): void {
    this.wakers.get(capability)?.();
  }

  /** Lets every waiting task go unadmitted; later waits answer false at once. */
  close(): void {
    this.closed = true;
    for (const q of this.queues.values()) for (const w of q.splice(0)) w.settle(0);
    this.queues.clear();
  }

  private async watch(capability: string, queue: Waiter[]): Promise<void> {
    let pause = FIRST_PAUSE_MS;
    try {
      while (queue.length > 0 && !this.closed) {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, pause);
          this.wakers.set(capability, () => {
            clearTimeout(timer);
            r();
          });
        });
        this.wakers.delete(capability);
        if (queue.length === 0) break;
        if (this.hooks.announce) await this.hooks.announce(capability);
        const agents = this.o.snapshot.agentsFor(capability);
        const decision = decide(
          agents,
          { taskId: capability, capability },
          this.o.snapshot.ringFor(capability),
          this.o.snapshot.inflightOf,
        );
        // Room the snapshot already shows (an agent joined, a count aged out), or room Redis shows:
        // handed out in queue order, one slot per task, so the most urgent go first.
        const free =
          decision.count() > 0
            ? await this.beyondReserved(
                capability,
                wanted(queue, openSlots(decision, this.o.snapshot)),
              )
            : await this.room(capability, decision);
        if (free > 0) {
          let left = free;
          while (left > 0 && queue.length > 0) {
            const w = queue.shift() as Waiter;
            const slots = Math.min(w.most, left);
            left -= slots;
            w.settle(slots);
          }
          pause = FIRST_PAUSE_MS;
        } else {
          pause = Math.min(2 * pause, LAST_PAUSE_MS);
        }
      }
    } catch {
      // Redis unreachable: the waiting tasks are let go unadmitted, as if the wait had ended.
      for (const w of queue.splice(0)) w.settle(0);
    } finally {
      if (this.queues.get(capability) === queue) this.queues.delete(capability);
      if (this.hooks.announce) await this.hooks.announce(capability).catch(() => undefined);
    }
  }
}
