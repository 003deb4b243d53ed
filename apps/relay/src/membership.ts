import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Logger } from 'pino';

/** What a membership needs. */
export interface MembershipOptions {
  redis: RedisClient;
  keys: ReachKeys;
  relayId: string;
  /** How long a renewal keeps this relay a member (REACH_RELAY_LEASE_MS). */
  leaseMs: number;
  logger: Logger;
}

/** Members whose lease ended longer ago than this are dropped from the set. */
const FORGET_AFTER_MS = 60_000;

/**
 * This relay's membership lease (`keys.relays()`: relay id → end of its lease, Redis time) and
 * the live members. A relay that stops renewing is no member once its lease ends; the others then
 * take its agents. A closing relay leaves at once.
 */
export class Membership {
  #members: string[] = [];
  #joined = false;

  constructor(private readonly o: MembershipOptions) {}

  /** The live relays as last read, sorted; empty until this relay joined. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** Renews this relay's lease and reads the live members. Returns true when they changed. */
  async renew(): Promise<boolean> {
    const { redis, keys, relayId, leaseMs } = this.o;
    const now = await redisNow(redis);
    await redis
      .multi()
      .zadd(keys.relays(), now + leaseMs, relayId)
      .zremrangebyscore(keys.relays(), '-inf', now - FORGET_AFTER_MS)
      .exec();
    this.#joined = true;
    return this.refresh(now);
  }

  /** Reads the live members (those whose lease ends after now). Returns true when they changed. */
  async refresh(now?: number): Promise<boolean> {
    if (!this.#joined) return false;
    const { redis, keys } = this.o;
    const at = now ?? (await redisNow(redis));
    const live = (await redis.zrangebyscore(keys.relays(), at, '+inf')).sort();
    const changed = live.join('\n') !== this.#members.join('\n');
    if (changed) this.o.logger.info({ relays: live }, 'relay membership changed');
    this.#members = live;
    return changed;
  }

  /** Leaves the set: the other relays take this relay's agents at their next refresh. */
  async leave(): Promise<void> {
    this.#joined = false;
    this.#members = [];
    await this.o.redis.zrem(this.o.keys.relays(), this.o.relayId);
  }
}

/** Redis server time, ms: leases are measured on it, never on a host clock. */
export async function redisNow(redis: RedisClient): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
