import type { RedisClient } from '@agent-reach/service-kit/redis';
import { Coalescer, type ReachKeys } from '@agent-reach/protocol';
import type { Item } from '@agent-reach/service-kit';
import {
  roomDoneScript,
  roomEnqueueScript,
  roomHoldScript,
  roomLeaveScript,
  roomPopScript,
  roomReturnScript,
  type EnqueueReply,
  type LeaveReply,
  type TakenFromRoom,
} from './room-scripts.ts';

/** A task entering a room. */
export interface RoomEntry {
  taskId: string;
  tenant: string;
  /** '' for none. */
  fairnessKey: string;
  tenantWeight: number;
  keyWeight: number;
  /** 0–9. */
  priority: number;
  /** Epoch ms. */
  now: number;
  /** Most tasks of the tenant waiting in the room. */
  maxTenant: number;
  /** Most tasks waiting in the room. */
  maxTotal: number;
  /** Most slots of the capability the tenant holds at once; 0 for no bound. */
  maxInflight: number;
}

/** Statuses of a task that holds (or is about to hold, or will hold again) an agent's slot. */
const HOLDING = new Set(['accepted', 'sent', 'received', 'failed', 'retry_wait']);

/** One tenant's figures in a room. */
export interface RoomTenantStats {
  tenant: string;
  /** Tasks waiting now. */
  queued: number;
  /** How long its oldest waiting task has waited, ms (0 with none). */
  oldest_wait_ms: number;
  /** Tasks that came into the room, ever. */
  arrived: number;
  /** Tasks sent from the room, ever. */
  sent: number;
  /** Wait of its recently sent tasks (of the room's last 1,000), ms. */
  wait_p50_ms: number;
  wait_p99_ms: number;
  /** Its share of the room's last 1,000 sent tasks, 0–1. */
  share: number;
}

/** A room's figures. */
export interface RoomStats {
  capability: string;
  queued: number;
  /** Tasks taken for a send that has not finished. */
  taking: number;
  /** Tasks set aside for a while: no agent could take them when their turn came. */
  held: number;
  oldest_wait_ms: number;
  tenants: RoomTenantStats[];
}

/** The p-th percentile (0–1) of sorted `values`; 0 for none. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}

/**
 * A capability's waiting room in Redis (docs/ROUTING.md, Waiting room): the tasks that found no
 * free slot, shared by every router and registry-sync instance, taken in weighted fair order.
 * Every key of one room is under one hash tag, so each step is one script call on one slot.
 */
export class WaitingRoom {
  /** The sends that ended in one tick, per room: one room-done call each. */
  private readonly dones: Coalescer<Item<readonly ['taskId', 'now']>, number>;
  /** The tasks put in during one tick, per capability: one room-enqueue call each. */
  private readonly entries: Coalescer<RoomEntry, EnqueueReply>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
  ) {
    this.dones = new Coalescer((room, tasks) =>
      roomDoneScript.run(this.redis, { keys: { room }, args: {}, items: tasks }),
    );
    this.entries = new Coalescer(async (capability, tasks) => {
      const replies = await roomEnqueueScript.run(this.redis, {
        keys: { room: this.keys.room(capability) },
        args: {},
        items: tasks,
      });
      // Marked after the tasks are in: a drainer that forgets an empty room reads it again after.
      if (replies.some((r) => r.kind === 'queued')) {
        const rooms = this.keys.rooms();
        const known = this.keys.roomsKnown();
        await Promise.all([this.redis.sadd(rooms, capability), this.redis.sadd(known, capability)]);
      }
      return replies;
    });
  }

  /**
   * Puts a task in `capability`'s room and marks the room as one that holds tasks: the tasks put
   * in during one tick go in one call, each as if it came alone, in the order they came.
   */
  enter(capability: string, e: RoomEntry): Promise<EnqueueReply> {
    return this.entries.call(capability, e);
  }

  /** Takes up to `most` tasks in fair order; each stays `taking` until done or given back. */
  take(
    capability: string,
    most: number,
    now: number,
    skip: Iterable<string> = [],
  ): Promise<TakenFromRoom[]> {
    return roomPopScript.run(this.redis, {
      keys: { room: this.keys.room(capability) },
      args: { now, most, skip: [...skip].join('\t') },
    });
  }

  /** Gives a taken (or held) task back to its place; false when it was not there. */
  giveBack(
    capability: string,
    taskId: string,
    from: 'taking' | 'held' = 'taking',
  ): Promise<boolean> {
    return roomReturnScript.run(this.redis, {
      keys: { room: this.keys.room(capability) },
      args: { taskId, from },
    });
  }

  /** Sets a taken task aside until `until` (no agent can take it now); false when not taken. */
  holdUntil(capability: string, taskId: string, until: number): Promise<boolean> {
    return roomHoldScript.run(this.redis, {
      keys: { room: this.keys.room(capability) },
      args: { taskId, until },
    });
  }

  /** Gives back the tasks held until no later than `now`; returns how many. */
  release(capability: string, now: number): Promise<number> {
    return this.giveBackUntil(capability, 'held', now);
  }

  /** Ends a sent task's stay: its wait in ms, or -1 when it was not being taken. */
  done(capability: string, taskId: string, now: number): Promise<number> {
    return this.dones.call(this.keys.room(capability), { taskId, now });
  }

  /** Takes a task out of the room wherever it is in it. */
  leave(capability: string, taskId: string): Promise<LeaveReply> {
    return roomLeaveScript.run(this.redis, {
      keys: { room: this.keys.room(capability) },
      args: { taskId },
    });
  }

  /** Capabilities whose rooms may hold tasks. */
  capabilities(): Promise<string[]> {
    return this.redis.smembers(this.keys.rooms());
  }

  /** The figures of every room that ever held a task (of `capability` alone when given). */
  async allStats(now: number, capability?: string): Promise<RoomStats[]> {
    const known = capability ? [capability] : await this.redis.smembers(this.keys.roomsKnown());
    return Promise.all(known.sort().map((c) => this.stats(c, now)));
  }

  /** Tasks waiting in `capability`'s room. */
  async waiting(capability: string): Promise<number> {
    return Number(await this.redis.hget(this.keys.room(capability), 'n')) || 0;
  }

  /**
   * Drops `capability` from the rooms that may hold tasks when its room is empty. The room is read
   * again after: a task put in meanwhile (whose writer marked it after) puts the mark back.
   */
  async forgetIfEmpty(capability: string): Promise<boolean> {
    const room = this.keys.room(capability);
    const busy = async () =>
      (Number(await this.redis.hget(room, 'n')) || 0) +
      (await this.redis.zcard(`${room}:taking`)) +
      (await this.redis.zcard(`${room}:held`));
    if ((await busy()) > 0) return false;
    await this.redis.srem(this.keys.rooms(), capability);
    if ((await busy()) === 0) return true;
    await this.redis.sadd(this.keys.rooms(), capability);
    return false;
  }

  /**
   * Forgets, for the tenants with a max_inflight, the tasks taken for them before `before` that
   * no longer hold a slot (finished, or gone): their turns come again. Returns how many.
   */
  async prune(capability: string, before: number): Promise<number> {
    const room = this.keys.room(capability);
    let gone = 0;
    for (const tenant of await this.redis.smembers(`${room}:capped`)) {
      const run = `${room}:run:${tenant}`;
      const ids = await this.redis.zrangebyscore(run, '-inf', before, 'LIMIT', 0, 500);
      if (ids.length === 0) continue;
      const taskKeys = ids.map((id) => this.keys.task(id));
      const statuses = await Promise.all(taskKeys.map((k) => this.redis.hget(k, 'status')));
      const over = ids.filter((_, i) => !HOLDING.has(statuses[i] ?? ''));
      if (over.length > 0) gone += await this.redis.zrem(run, ...over);
    }
    return gone;
  }

  /** Gives back the tasks taken before `before` (epoch ms) whose send never ended; returns how many. */
  reclaim(capability: string, before: number): Promise<number> {
    return this.giveBackUntil(capability, 'taking', before);
  }

  /** Gives back up to 100 tasks of `from` scored no later than `until`; returns how many. */
  private async giveBackUntil(
    capability: string,
    from: 'taking' | 'held',
    until: number,
  ): Promise<number> {
    const key = `${this.keys.room(capability)}:${from}`;
    const ids = await this.redis.zrangebyscore(key, '-inf', until, 'LIMIT', 0, 100);
    let back = 0;
    for (const taskId of ids) if (await this.giveBack(capability, taskId, from)) back++;
    return back;
  }

  /** The room's figures: counts, oldest waits, recent waits and shares per tenant. */
  async stats(capability: string, now: number): Promise<RoomStats> {
    const room = this.keys.room(capability);
    const [meta, taking, held, recent] = await Promise.all([
      this.redis.hgetall(room),
      this.redis.zcard(`${room}:taking`),
      this.redis.zcard(`${room}:held`),
      this.redis.lrange(`${room}:recent`, 0, -1),
    ]);
    const names = new Set<string>();
    for (const field of Object.keys(meta)) {
      const m = /^(?:n|in|out):(.+)$/.exec(field);
      if (m?.[1]) names.add(m[1]);
    }
    const waits = new Map<string, number[]>();
    for (const line of recent) {
      const [tenant = '', wait = '0'] = line.split('\t');
      names.add(tenant);
      const list = waits.get(tenant) ?? [];
      list.push(Number(wait) || 0);
      waits.set(tenant, list);
    }
    const tenants: RoomTenantStats[] = [];
    let oldest = 0;
    for (const tenant of [...names].sort()) {
      const [, first] = await this.redis.zrange(`${room}:e:${tenant}`, 0, 0, 'WITHSCORES');
      const oldestWait = first === undefined ? 0 : Math.max(0, now - Number(first));
      oldest = Math.max(oldest, oldestWait);
      const sorted = (waits.get(tenant) ?? []).sort((a, b) => a - b);
      tenants.push({
        tenant,
        queued: Number(meta[`n:${tenant}`]) || 0,
        oldest_wait_ms: oldestWait,
        arrived: Number(meta[`in:${tenant}`]) || 0,
        sent: Number(meta[`out:${tenant}`]) || 0,
        wait_p50_ms: percentile(sorted, 0.5),
        wait_p99_ms: percentile(sorted, 0.99),
        share: recent.length > 0 ? Number((sorted.length / recent.length).toFixed(4)) : 0,
      });
    }
    return {
      capability,
      queued: Number(meta.n) || 0,
      taking,
      held,
      oldest_wait_ms: oldest,
      tenants,
    };
  }
}
