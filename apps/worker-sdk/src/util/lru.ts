/**
 * A map that holds at most `capacity` entries and forgets the least recently used one first.
 * A JS `Map` iterates in insertion order, so re-inserting on access keeps the oldest entry first.
 */
export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;

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
      const oldest = this.#map.keys().next();
      if (oldest.done === true) break;
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
  }
}
