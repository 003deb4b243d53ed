/**
 * Counts the agent's task slots. The read loop takes one slot per entry it reads and never
 * asks Redis for more entries than there are free slots, so an agent never holds more tasks
 * than `maxConcurrency` (the router's load numbers stay true, and a slow agent does not hoard).
 */
export class Slots {
  #inUse = 0;
  #freeWaiters: (() => void)[] = [];
  #idleWaiters: (() => void)[] = [];

  /** @param max - the number of slots */
  constructor(readonly max: number) {}

  /** Slots taken. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Slots free. */
  get free(): number {
    return this.max - this.#inUse;
  }

  /** Takes `n` slots; the caller must not take more than {@link free}. */
  take(n: number): void {
    if (n > this.free) throw new RangeError(`take(${n}) with ${this.free} free`);
    this.#inUse += n;
  }

  /** Gives one slot back and wakes whoever waits. */
  release(): void {
    if (this.#inUse === 0) throw new RangeError('release() with no slot taken');
    this.#inUse -= 1;
    if (this.#freeWaiters.length > 0) for (const wake of this.#freeWaiters.splice(0)) wake();
    if (this.#inUse === 0 && this.#idleWaiters.length > 0)
      for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Resolves once a slot is free, or when `signal` aborts. Never rejects. */
  whenFree(signal?: AbortSignal): Promise<void> {
    if (this.free > 0 || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        this.#freeWaiters = this.#freeWaiters.filter((w) => w !== done);
        resolve();
      };
      this.#freeWaiters.push(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves at the next {@link release}, even while slots are free. */
  nextRelease(): Promise<void> {
    return new Promise((resolve) => this.#freeWaiters.push(resolve));
  }

  /** Resolves once no slot is taken. */
  whenIdle(): Promise<void> {
    if (this.#inUse === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}
