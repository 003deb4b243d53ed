import type { RedisClient } from '@agent-reach/service-kit/redis';

/**
 * A bounded pool of connections for blocking reads (XREAD BLOCK holds its connection for the
 * whole wait). Waiters beyond the bound queue for a free connection.
 */
export class BlockingPool {
  private readonly idle: RedisClient[] = [];
  private readonly waiters: ((r: RedisClient) => void)[] = [];
  private created = 0;
  private closed = false;
  private readonly all = new Set<RedisClient>();

  constructor(
    private readonly factory: () => RedisClient,
    private readonly max: number,
  ) {}

  /** Runs `fn` with a connection of its own. */
  async use<T>(fn: (conn: RedisClient) => Promise<T>): Promise<T> {
    const conn = await this.acquire();
    try {
      return await fn(conn);
    } finally {
      this.release(conn);
    }
  }

  /** Closes every connection; blocked reads end with an error. Idempotent. */
  close(): void {
    this.closed = true;
    for (const conn of this.all) conn.disconnect();
    this.all.clear();
    this.idle.length = 0;
  }

  private acquire(): Promise<RedisClient> {
    if (this.closed) return Promise.reject(new Error('Connection is closed.'));
    const conn = this.idle.pop();
    if (conn) return Promise.resolve(conn);
    if (this.created < this.max) {
      this.created++;
      const fresh = this.factory();
      this.all.add(fresh);
      return Promise.resolve(fresh);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(conn: RedisClient): void {
    if (this.closed) return;
    const next = this.waiters.shift();
    if (next) next(conn);
    else this.idle.push(conn);
  }
}
