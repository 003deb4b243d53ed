import { defineScript } from '@agent-reach/service-kit';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { oneOf } from '../reply-slots.ts';

/** Takes or renews a lease lock for a duty that must run once across instances. */
export const lockScript = defineScript({
  lua: new URL('./lock-1.lua', import.meta.url),
  command: 'reachLock',
  keys: ['lock'],
  args: ['owner', 'leaseMs'],
  decode: (raw: unknown): boolean => oneOf('lock-1.lua', raw, [0, 1]) === 1,
});

/** What a lease lock needs. */
export interface LeaseLockOptions {
  /** A connection where lock-1.lua is loaded (`lockScript`). */
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
