/**
 * A map that holds at most `capacity` entries and forgets the least recently used one first.
 * A JS `Map` iterates in insertion order, so re-inserting on access keeps the oldest entry first.
 *
 * Evictions read the oldest key from one iterator kept across calls. A fresh `keys().next()` on
 * every eviction would walk past every entry deleted from the front since V8 last rehashed the
 * map — thousands, once the map is full — and made each `set()` of a full cache cost
 * microseconds. Every key the kept iterator has passed was evicted, so where it stands is the
 * oldest entry still held.
 */
export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;
  #oldest: Iterator<K> | undefined;

  /** @param capacity - at most this many entries are kept; 0 keeps nothing. */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0)
      throw new RangeError(`capacity must be an integer ≥ 0, got ${capacity}`);
    this.#capacity = capacity;
  }

  /** Number of entries held. */
  get size(): number {
    return this.#map.size;
  }

  /** The value for `key`, marking it most recently used. */
  get(key: K): V | undefined {
    if (!this.#map.has(key)) return undefined;
    const value = this.#map.get(key) as V;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /** True when `key` is held (does not change its recency). */
  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Stores `value` under `key` as the most recently used entry, evicting the oldest past capacity. */
  set(key: K, value: V): this {
    this.#map.delete(key);
    if (this.#capacity === 0) return this;
    this.#map.set(key, value);
    while (this.#map.size > this.#capacity) {
      this.#oldest ??= this.#map.keys();
      let oldest = this.#oldest.next();
      // A finished iterator stays finished: start another from the front.
      if (oldest.done === true) {
        this.#oldest = this.#map.keys();
        oldest = this.#oldest.next();
        if (oldest.done === true) break;
      }
      this.#map.delete(oldest.value);
    }
    return this;
  }

  /** Forgets `key`; true when it was held. */
  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.#map.clear();
    this.#oldest = undefined;
  }
}
