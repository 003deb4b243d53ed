/**
 * A bounded FIFO: `push` is O(1) and, when full, overwrites the oldest item. Storage grows
 * lazily up to `capacity`, so an idle sink costs nothing.
 */
export class RingBuffer<T> {
  private readonly items: Array<T | undefined> = [];
  private head = 0;
  private count = 0;

  /** @param capacity - most items held; must be ≥ 1. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be an integer ≥ 1, got ${capacity}`);
    }
  }

  /** Items held. */
  get size(): number {
    return this.count;
  }

  /** Appends `item`; returns true when the oldest item was overwritten to make room. */
  push(item: T): boolean {
    const tail = (this.head + this.count) % this.capacity;
    // While the array is still growing, the tail is never past its end (see `take`).
    if (tail === this.items.length) this.items.push(item);
    else this.items[tail] = item;
    if (this.count < this.capacity) {
      this.count++;
      return false;
    }
    this.head = (this.head + 1) % this.capacity;
    return true;
  }

  /** Removes and returns up to `max` of the oldest items, oldest first. */
  take(max: number): T[] {
    const n = Math.min(max, this.count);
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.items[this.head] as T;
      this.items[this.head] = undefined; // let the event be collected
      this.head = (this.head + 1) % this.capacity;
    }
    this.count -= n;
    return out;
  }

  /** Removes everything; returns how many items were held. */
  clear(): number {
    const n = this.count;
    this.items.length = 0;
    this.head = 0;
    this.count = 0;
    return n;
  }
}
