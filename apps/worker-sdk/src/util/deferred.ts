/** A promise with its resolve and reject at hand; settling twice is a no-op. */
export class Deferred<T> {
  readonly promise: Promise<T>;
  #settled = false;
  #resolve!: (value: T) => void;
  #reject!: (reason: unknown) => void;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Nobody may be waiting when it rejects; an unobserved rejection must not crash the process.
    this.promise.catch(() => undefined);
  }

  /** True once resolved or rejected. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Resolves, unless already settled. */
  resolve(value: T): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(value);
  }

  /** Rejects, unless already settled. */
  reject(reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(reason);
  }
}
