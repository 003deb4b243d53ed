import type { Slots } from './slots.ts';

/**
 * Shares an agent's free task slots among its read lanes (on a Redis Cluster, one blocking read
 * per slot group of its streams, see `readLanes`), so that the lanes together never read more
 * entries than there are free slots, and none of them starves: lanes are served in the order
 * they asked (a lane that has just read asks again behind the others), and each gets an even
 * share of what is free, at least one slot. With one lane, its share is every free slot.
 */
export class SlotShares {
  #reserved = 0;
  #holding = 0;
  #waiting: { want: (share: number) => void }[] = [];
  #watchingFree = false;

  /**
   * @param slots - the agent's slots
   * @param lanes - how many lanes read (read at each grant)
   */
  constructor(
    private readonly slots: Slots,
    private readonly lanes: () => number,
  ) {}

  /**
   * Fewer free slots than lanes, or a lane waiting for a share: a lane holding one should not
   * keep it through a long BLOCK while another lane's stream may hold a task.
   */
  get contended(): boolean {
    return this.#waiting.length > 0 || this.slots.free < this.lanes();
  }

  /** Free slots no lane holds. */
  get available(): number {
    return this.slots.free - this.#reserved;
  }

  /**
   * Waits for this lane's turn and a free slot, then holds a share of the free slots (≥ 1) until
   * {@link settle}. Resolves 0 when `signal` aborts first.
   */
  reserve(signal: AbortSignal): Promise<number> {
    if (signal.aborted) return Promise.resolve(0);
    // Nobody waits and a slot is free (a lone lane, every read): granted now, no listener.
    if (this.#waiting.length === 0 && this.available >= 1) return Promise.resolve(this.#grant());
    return new Promise((resolve) => {
      const waiter = {
        want: (share: number) => {
          signal.removeEventListener('abort', onAbort);
          resolve(share);
        },
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
        resolve(0);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
      this.#serve();
    });
  }

  /**
   * Ends a share: `taken` of its slots (≤ share) are taken for the entries read, the rest go back
   * to the lanes waiting.
   */
  settle(share: number, taken: number): void {
    if (taken > share) throw new RangeError(`settle(${share}, ${taken}): more taken than held`);
    this.#reserved -= share;
    this.#holding -= 1;
    if (taken > 0) this.slots.take(taken);
    this.#serve();
  }

  /** Holds the next share (at least one slot, an even part of what is free) for a lane. */
  #grant(): number {
    const notHolding = Math.max(1, this.lanes() - this.#holding);
    const share = Math.max(1, Math.floor(this.available / notHolding));
    this.#reserved += share;
    this.#holding += 1;
    return share;
  }

  #serve(): void {
    while (this.#waiting.length > 0 && this.available >= 1) {
      const waiter = this.#waiting.shift();
      if (waiter === undefined) break;
      waiter.want(this.#grant());
    }
    // Nothing left to share: wait for a task to finish (slots held by lanes come back by
    // settle(), which serves again).
    if (this.#waiting.length > 0 && !this.#watchingFree) {
      this.#watchingFree = true;
      void this.slots.nextRelease().then(() => {
        this.#watchingFree = false;
        this.#serve();
      });
    }
  }
}
