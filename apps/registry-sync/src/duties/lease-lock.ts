import type { RedisClient } from '@agent-reach/service-kit/redis';
import { lockScript } from '../commands/lock.ts';

/**
 * The housekeeping lock's lease: three sweep intervals, at least 3 s. When the leader dies,
 * another instance takes the duties within this; the acks it held are claimed within twice
 * this (see `AckConsumerSettings.claimIdleMs`).
 */
export function housekeepingLeaseMs(sweepIntervalMs: number): number {
  return Math.max(3 * sweepIntervalMs, 3000);
}

/** A Redis lease lock for a duty that must run on one instance at a time. */
export class LeaseLock {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  /** Takes or renews the lock; true while this instance holds it. */
  async hold(): Promise<boolean> {
    return lockScript.run(this.redis, {
      keys: { lock: this.key },
      args: { owner: this.owner, leaseMs: this.leaseMs },
    });
  }

  /** Gives the lock up if this instance holds it. */
  async release(): Promise<void> {
    if ((await this.redis.get(this.key)) === this.owner) await this.redis.del(this.key);
  }
}
