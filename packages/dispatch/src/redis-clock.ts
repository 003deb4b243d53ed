/** How long a bound is kept before a looser one may replace it (clocks drift). */
const KEEP_MS = 10_000;
/** How often a following clock asks Redis its time, ms: a fresh pair of bounds in every keep. */
export const FOLLOW_MS = 5_000;

/**
 * Redis server time as this process reads it, without asking Redis on any task's path: its own
 * clock plus an offset bounded by the Redis times it is handed.
 *
 * - A Redis time on a reply (a delivery's `sent_at`) gives a lower bound of the offset: Redis read
 *   its clock before the reply came back. The highest seen lately is kept.
 * - A `TIME` this clock asks for itself ({@link follow}) gives both bounds: Redis read its clock
 *   after the question left. The lowest upper bound seen lately is kept.
 * - While the bounds hold zero, this process's clock agrees with Redis's as closely as they can
 *   tell, and it is used as it is. Otherwise the lower bound is: the clock errs early, by a
 *   reply's latency at most. A lower bound alone would err early for as long as it is kept, by
 *   the event-loop lag of a busy moment: a task submitted a while after a burst would be created
 *   before the time its caller submitted it.
 *
 * For the task's own times only — `created_at` and the deadline a claim derives from it. Lease
 * arithmetic keeps using `TIME` inside the scripts (ARCHITECTURE.md, invariant 4).
 */
export class RedisClock {
  #lower = 0;
  #lowerAt = -Infinity;
  #upper = Infinity;
  #upperAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly local: () => number = Date.now) {}

  /**
   * A Redis time (epoch ms) that was just handed to this process; `askedAt`, this process's time
   * when it asked, when the reply is to its own question.
   */
  observe(redisMs: number, askedAt?: number): void {
    if (!(redisMs > 0)) return;
    const at = this.local();
    // Date.now() is cut to the millisecond: the reply may have come up to 1 ms later than `at`.
    const lower = redisMs - at - (askedAt === undefined ? 0 : 1);
    if (lower >= this.#lower || at - this.#lowerAt > KEEP_MS) {
      this.#lower = lower;
      this.#lowerAt = at;
    }
    if (askedAt === undefined) return;
    const upper = redisMs - askedAt;
    if (upper <= this.#upper || at - this.#upperAt > KEEP_MS) {
      this.#upper = upper;
      this.#upperAt = at;
    }
  }

  /** Redis server time now, epoch ms (this process's clock until a Redis time was seen). */
  now(): number {
    const agrees = Number.isFinite(this.#upper) && this.#lower <= 0 && this.#upper >= 0;
    return this.local() + (agrees ? 0 : this.#lower);
  }

  /**
   * Asks Redis its time now and every `everyMs` (`time` resolves with epoch ms), until
   * {@link stop}. A question that fails is asked again at the next turn.
   */
  follow(time: () => Promise<number>, everyMs = FOLLOW_MS): void {
    this.stop();
    const ask = () => {
      const askedAt = this.local();
      time().then(
        (redisMs) => this.observe(redisMs, askedAt),
        () => undefined,
      );
    };
    ask();
    this.#timer = setInterval(ask, everyMs);
    this.#timer.unref();
  }

  /** Stops asking Redis its time. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Redis's `TIME` reply ([seconds, microseconds]) as epoch ms, to the microsecond. */
export function timeReplyMs([sec, usec]: readonly (string | number)[]): number {
  return Number(sec) * 1000 + Number(usec) / 1000;
}
