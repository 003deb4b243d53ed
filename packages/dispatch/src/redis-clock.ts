/** How long the highest offset seen is kept before a lower one may replace it (clocks drift). */
const KEEP_MS = 10_000;

/**
 * Redis server time as this process reads it, without asking Redis: its own clock plus the
 * offset the Redis times it is handed show (a delivery's `sent_at`, the deliver script's `TIME`).
 * An offset seen on a reply is at most the true one (Redis read its clock before the reply came
 * back), so the clock keeps the highest seen lately and errs early by the reply's latency at most.
 *
 * For the task's own times only — `created_at` and the deadline a claim derives from it. Lease
 * arithmetic keeps using `TIME` inside the scripts (ARCHITECTURE.md, invariant 4).
 */
export class RedisClock {
  #offset = 0;
  #seenAt = -Infinity;

  constructor(private readonly local: () => number = Date.now) {}

  /** A Redis time (epoch ms) that was just handed to this process. */
  observe(redisMs: number): void {
    if (!(redisMs > 0)) return;
    const at = this.local();
    const offset = redisMs - at;
    if (offset >= this.#offset || at - this.#seenAt > KEEP_MS) {
      this.#offset = offset;
      this.#seenAt = at;
    }
  }

  /** Redis server time now, epoch ms (this process's clock until a Redis time was seen). */
  now(): number {
    return this.local() + this.#offset;
  }
}
