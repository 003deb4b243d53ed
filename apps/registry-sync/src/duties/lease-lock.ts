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

/** What a lease lock needs. */
export interface LeaseLockOptions {
  redis: RedisClient;
  key: string;
  owner: string;
  leaseMs: number;
}

/** A Redis lease lock for a duty that must run on one instance at a time. */
export class LeaseLock {
  constructor(private readonly o: LeaseLockOptions) {}

  /** Takes or renews the lock; true while this instance holds it. */
  async hold(): Promise<boolean> {
    return lockScript.run(this.o.redis, {
      keys: { lock: this.o.key },
      args: { owner: this.o.owner, leaseMs: this.o.leaseMs },
    });
  }

  /** Gives the lock up if this instance holds it. */
  async release(): Promise<void> {
    if ((await this.o.redis.get(this.o.key)) === this.o.owner) await this.o.redis.del(this.o.key);
  }
}
