import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { nextNonce } from '@agent-reach/service-kit';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import { CapacityWaiter } from '../snapshot/capacity-waiter.ts';
import type { SnapshotHolder } from '../snapshot/snapshot-holder.ts';
import {
  onlyExcludedFor,
  routeWithFallback,
  type RoutedTo,
  type RoutingContext,
} from '../send/route-task.ts';
import type { SendOutcome, SendTarget, TaskSender } from '../send/task-sender.ts';
import type { Delivery } from '../delivery.ts';
import { isPull } from '../routing/policy.ts';
import { assignRetry } from '../send/attempt-claims.ts';
import { poolOf, readStoredTask, type StoredTask } from '../task/task-spec.ts';
import type { TakenFromRoom } from './room-scripts.ts';
import type { WaitingRoom } from './waiting-room.ts';
import { pullSlots, type PoolGauge } from './pool-gauge.ts';

/** What a drainer works with. */
export interface RoomDrainerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** The concurrency watermark in force. */
  watermark: () => number;
  sender: TaskSender;
  /** Where a task leaving the room is assigned, in its tick's call for its task shard. */
  delivery: Pick<Delivery, 'assigns' | 'watch'>;
  room: WaitingRoom;
  /** How deep the pull pools are: a task goes to its pool only while the pool is shallow. */
  pools: PoolGauge;
  logger: Logger;
  /** How long a send may stay undelivered before registry-sync re-drives it. */
  dispatchGraceMs: number;
  /** How often the set of rooms holding tasks is read again, ms. @default 250 */
  pollMs?: number;
  /** Sends in flight per capability at most. @default 8 */
  lanes?: number;
  /** Freed slots left to retries another process holds (the router's hook). */
  reserved?: (capability: string) => Promise<number>;
  /**
   * Give back, every 20 polls, the tasks taken this long ago whose send never ended (their
   * process stopped mid-send); registry-sync's. @default never
   */
  reclaimAfterMs?: number;
}

/** How long a lane waits for a slot before it looks whether its room is empty, ms. */
const LANE_WAIT_MS = 1000;
/** A task taken whose record is missing this long is dropped from the room (its writer stopped). */
const ORPHAN_MS = 10_000;
/**
 * How long a task taken before its writer stored it (queue-task.ts puts it in the room, then
 * stores it) is waited for before it goes back, ms: its record is written a round trip later.
 */
const STORE_WAIT_MS = 5;
/** How long a task no agent can take now is set aside, so the tasks after it go first, ms. */
const HOLD_MS = 1000;
/** A lane that found the room's waiting tasks all set aside pauses this long at most, ms. */
const IDLE_MS = 100;
/** How long a tenant whose pool is full is passed over, unless a slot frees first, ms. */
const POOL_FULL_MS = 50;
const MAX_CANDIDATES = 3;
/**
 * The most tasks a lane takes at once: as many as it saw slots free, up to this. A burst of
 * completions then moves a burst of waiting tasks in one room call, their sends side by side.
 */
const MOST_PER_TAKE = 32;

/**
 * Sends the tasks of the waiting rooms as slots free (docs/ROUTING.md, Waiting room), in every
 * router and registry-sync: whichever process sees a slot free first sends the room's next task
 * in fair order. A few lanes per capability each wait for a free slot (the capacity waiter's loop
 * over the agents' true counts), take one task and send it through the one task sender; a task
 * whose send finds no slot after all goes back to its place. Idle rooms cost one SMEMBERS per poll.
 */
export class RoomDrainer {
  private readonly log: Logger;
  private readonly capacity: CapacityWaiter;
  private readonly routing: RoutingContext;
  /** Capability → lanes running. */
  private readonly lanes = new Map<string, number>();
  /** Capability → tenants whose pool was found full → until when they are passed over. */
  private readonly poolFull = new Map<string, Map<string, number>>();
  /** Capability → tasks its lanes took and have not finished sending. */
  private readonly holding = new Map<string, number>();
  /** Capability → ends the idle pauses of its lanes (a slot freed). */
  private readonly idle = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private polls = 0;

  constructor(private readonly o: RoomDrainerOptions) {
    this.log = o.logger.child({ module: 'room-drainer' });
    this.routing = { redis: o.redis, keys: o.keys, snapshot: o.snapshot, watermark: o.watermark };
    // The slots a pass sees free, less those the lanes' tasks being sent will take: the tasks
    // this process holds out of the room never outnumber the slots it saw free.
    const reserved = o.reserved;
    this.capacity = new CapacityWaiter({
      redis: o.redis,
      keys: o.keys,
      snapshot: o.snapshot,
      hooks: {
        reserved: async (capability) =>
          (reserved ? await reserved(capability) : 0) + (this.holding.get(capability) ?? 0),
      },
    });
  }

  /** Starts reading which rooms hold tasks. */
  start(): void {
    const poll = () => {
      this.timer = setTimeout(() => {
        void this.refresh().finally(() => {
          if (!this.closed) poll();
        });
      }, this.o.pollMs ?? 250);
      this.timer.unref();
    };
    void this.refresh();
    poll();
  }

  /** Stops: lanes end after their current send. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.capacity.close();
  }

  /** True while this process knows `capability`'s room holds tasks: new tasks go in line. */
  busy(capability: string): boolean {
    return this.lanes.has(capability);
  }

  /** Drains `capability`'s room now (a task was put in it, a slot freed). */
  kick(capability: string): void {
    if (this.closed || this.lanes.has(capability)) return;
    const lanes = this.o.lanes ?? 8;
    this.lanes.set(capability, lanes);
    for (let i = 0; i < lanes; i++) void this.lane(capability);
  }

  /**
   * A slot of `agentId` freed (registry-sync applied its completion): the lanes of its
   * capabilities' rooms look now rather than at their next pass.
   */
  freed(agentId: string): void {
    const agent = this.o.snapshot.agent(agentId);
    // A pull agent's slot freed: its pool has room again, and its depth is read anew.
    const pull = agent !== undefined && isPull(agent);
    if (pull) this.o.pools.forget();
    for (const capability of agent?.capabilities ?? []) {
      if (!this.lanes.has(capability)) continue;
      this.capacity.poke(capability);
      if (pull) this.poolFull.delete(capability);
      for (const wake of this.idle.get(capability) ?? []) wake();
    }
  }

  private async refresh(): Promise<void> {
    try {
      const reclaim = this.o.reclaimAfterMs !== undefined && this.polls++ % 20 === 0;
      for (const capability of await this.o.room.capabilities()) {
        const now = Date.now();
        if (reclaim) await this.o.room.reclaim(capability, now - (this.o.reclaimAfterMs ?? 0));
        await this.o.room.release(capability, now);
        // A task sent a moment ago may not show its new status yet: only older ones are looked at.
        await this.o.room.prune(capability, now - 1000);
        this.kick(capability);
      }
    } catch (err: unknown) {
      this.log.warn({ err }, 'waiting rooms not read; read again shortly');
    }
  }

  private async lane(capability: string): Promise<void> {
    try {
      // A pool's room is not an agent's slot: a capability pull agents read takes a task first
      // and sees whether its destination has room, unless a send just found every agent full.
      let waitSlot = !this.readsPools(capability);
      while (!this.closed) {
        let slots = 1;
        if (waitSlot) {
          slots = await this.capacity.slots(capability, LANE_WAIT_MS, MOST_PER_TAKE);
          if (slots === 0) {
            if (this.closed || (await this.o.room.forgetIfEmpty(capability))) break;
            continue;
          }
        }
        const taken = await this.take(capability, slots);
        if (taken.length === 0) {
          if (await this.o.room.forgetIfEmpty(capability)) break;
          // Only tasks set aside (or being sent, or bound for a full pool) are left.
          await this.pause(capability, this.poolFull.has(capability) ? POOL_FULL_MS : IDLE_MS);
          continue;
        }
        // Sent side by side: their reads, claims and deliveries share the event-loop turns.
        const outcomes = await Promise.all(
          taken.map((t) => this.send(capability, t).finally(() => this.hold(capability, -1))),
        );
        waitSlot = outcomes.includes('full') || !this.readsPools(capability);
      }
    } catch (err: unknown) {
      this.log.warn({ err, capability }, 'waiting room not drained; tried again shortly');
    } finally {
      const left = (this.lanes.get(capability) ?? 1) - 1;
      if (left > 0) this.lanes.set(capability, left);
      else this.lanes.delete(capability);
    }
  }

  /**
   * Takes up to `slots` of the room's next tasks, held (counted against the slots the next passes
   * see free) from the moment the slots were handed out: a pass that ran while the room call was
   * under way would otherwise hand the same free slots to another lane.
   */
  private async take(capability: string, slots: number): Promise<TakenFromRoom[]> {
    this.hold(capability, slots);
    let taken: TakenFromRoom[] = [];
    try {
      const now = Date.now();
      taken = await this.o.room.take(capability, slots, now, this.passedOver(capability, now));
      return taken;
    } finally {
      this.hold(capability, taken.length - slots);
    }
  }

  /** Counts tasks taken from `capability`'s room (`n` > 0) or done sending (`n` < 0). */
  private hold(capability: string, n: number): void {
    const left = (this.holding.get(capability) ?? 0) + n;
    if (left > 0) this.holding.set(capability, left);
    else this.holding.delete(capability);
  }

  /** Whether some live agent of `capability` reads its pool. */
  private readsPools(capability: string): boolean {
    return this.o.snapshot.agentsFor(capability).some(isPull);
  }

  /** The tenants of `capability` whose pool was found full a moment ago. */
  private passedOver(capability: string, now: number): string[] {
    const full = this.poolFull.get(capability);
    if (!full) return [];
    for (const [tenant, until] of full) if (until <= now) full.delete(tenant);
    if (full.size === 0) this.poolFull.delete(capability);
    return [...full.keys()];
  }

  /** Waits `ms`, or until a slot of `capability` frees. */
  private pause(capability: string, ms: number): Promise<void> {
    let wakers = this.idle.get(capability);
    if (!wakers) this.idle.set(capability, (wakers = new Set()));
    const set = wakers;
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  /**
   * Sends a task taken from the room, or gives it back to its place; 'full' when it went back
   * because every agent that may take it is at capacity.
   */
  private async send(capability: string, t: TakenFromRoom): Promise<'full' | 'done'> {
    const { redis, keys, room } = this.o;
    let task = await readStoredTask(redis, keys, t.taskId);
    if (!task && t.waitedMs < ORPHAN_MS) {
      // Taken between its writer's two steps: read once more rather than give it back, which
      // costs a call to give it back, its turn again, and a second take.
      await sleep(STORE_WAIT_MS);
      task = await readStoredTask(redis, keys, t.taskId);
    }
    if (!task) {
      // Its writer put it in the room and has not stored it yet, or stopped in between.
      if (t.waitedMs >= ORPHAN_MS) await room.leave(capability, t.taskId);
      else await room.giveBack(capability, t.taskId);
      return 'done';
    }
    if (task.status !== 'queued') {
      // Cancelled, dead at its deadline, or sent by another process: no longer waiting.
      await room.leave(capability, t.taskId);
      return 'done';
    }
    const routed = await routeWithFallback(this.routing, task, { picks: MAX_CANDIDATES });
    const candidates = routed.push;
    if (task.poolOnly || candidates.length === 0) {
      // Pull agents only (or `mode: "batch"`): into the pool they read. None that may take it
      // (its tags, region or tenant): the next task goes first, this one comes back in a second.
      if (task.poolOnly || routed.pull.length > 0 || pullSlots(routed.decision, task.tenant) > 0)
        await this.toPool(capability, t, task, routed);
      else if (onlyExcludedFor(routed.decision, ['full', 'watermark'])) {
        // Its agents filled up since the slot was seen free: back to its place, its turn kept.
        await room.giveBack(capability, t.taskId);
        return 'full';
      } else await room.holdUntil(capability, t.taskId, Date.now() + HOLD_MS);
      return 'done';
    }
    const { watch } = this.o.delivery;
    // The send's watchdog: registry-sync re-drives it should this process stop mid-send.
    await watch.move(t.taskId, Date.now() + this.o.dispatchGraceMs);
    const outcome = await this.sendTo(t, task, routed, {
      agents: candidates,
      count: routed.pushCount,
    });
    if (outcome.kind === 'sent') {
      await room.done(capability, t.taskId, outcome.sentAt);
      return 'done';
    }
    if (outcome.kind === 'not_ours') {
      await room.leave(capability, t.taskId);
      return 'done';
    }
    // No candidate took it (a slot counted free was taken first): back to its place, its
    // watchdog back at its deadline.
    if (task.deadlineMs > 0) await watch.move(t.taskId, task.deadlineMs);
    await room.giveBack(capability, t.taskId);
    return 'full';
  }

  /** One send of a task taken from the room: its waiting attempt, taken for the chosen target. */
  private sendTo(
    t: TakenFromRoom,
    task: StoredTask,
    routed: RoutedTo,
    to: SendTarget,
  ): Promise<SendOutcome> {
    return this.o.sender.send({
      task,
      claim: assignRetry(this.o.redis, this.o.keys, this.o.delivery, {
        taskId: t.taskId,
        attempt: task.attempt,
        nonce: nextNonce(),
        graceMs: this.o.dispatchGraceMs,
        waitsAs: 'queued',
      }),
      to,
      reason: `queued ${t.waitedMs} ms behind ${t.ahead}`,
      watched: true,
      ...(routed.fallback ? { fallback: routed.capability } : {}),
    });
  }

  /**
   * A task whose only agents read pools: into its capability's pool, ending its stay, while the
   * pool holds less than its bound; else back to its place, its tenant passed over until a slot
   * frees (its pull agents serve it alone).
   */
  private async toPool(
    capability: string,
    t: TakenFromRoom,
    task: StoredTask,
    routed: RoutedTo,
  ): Promise<void> {
    const pool = poolOf({ tenant: task.tenant, capability: routed.capability });
    const slots = pullSlots(routed.decision, task.tenant);
    const added = slots > 0 ? await this.o.pools.tryAdd(pool, slots) : undefined;
    if (slots > 0 && added === undefined) {
      await this.o.room.giveBack(capability, t.taskId);
      let full = this.poolFull.get(capability);
      if (!full) {
        full = new Map<string, number>();
        this.poolFull.set(capability, full);
      }
      full.set(t.tenant, Date.now() + POOL_FULL_MS);
      return;
    }
    const outcome = await this.sendTo(t, task, routed, {
      pool: 'pull_agents',
      waitMs: Math.max(0, task.deadlineMs - Date.now()),
    }).finally(added);
    if (outcome.kind === 'sent') await this.o.room.done(capability, t.taskId, outcome.sentAt);
    else await this.o.room.leave(capability, t.taskId);
  }
}
