/** Runs one batch: one result per item, in the items' order. */
export type BatchRunner<A, R> = (key: string, items: readonly A[]) => Promise<readonly R[]>;

interface Batch<A, R> {
  items: A[];
  bytes: number;
  waiters: { resolve: (r: R) => void; reject: (err: unknown) => void }[];
}

/** When a batch leaves early. */
export interface CoalescerLimits {
  /** Items in one batch. @default 200 */
  maxItems?: number;
  /** What the calls' `bytes` add up to in one batch. @default 1 MiB */
  maxBytes?: number;
}

/**
 * Gathers the calls that share a key during one turn of the event loop and runs them as one
 * batch: the steps of one Redis hash slot (an agent's record, pending hash and inbox; a callback
 * topic and its marks) go to Redis as one script call for every task of the tick instead of one
 * call per task — one command object, promise and reply to pay for, not one per task. Each call
 * still gets its own result; a batch that fails rejects every call in it.
 *
 * A batch leaves when the turn's I/O callbacks have run (`setImmediate`, as ioredis'
 * auto-pipelining does), or at once when it reaches `maxItems` items or `maxBytes`: a script
 * call holds Redis for as long as it runs, so a batch of large payloads is kept short.
 */
export class Coalescer<A, R> {
  private batches = new Map<string, Batch<A, R>>();
  private scheduled = false;
  private readonly maxItems: number;
  private readonly maxBytes: number;

  constructor(
    private readonly run: BatchRunner<A, R>,
    limits: CoalescerLimits = {},
  ) {
    this.maxItems = limits.maxItems ?? 200;
    this.maxBytes = limits.maxBytes ?? 1024 * 1024;
  }

  /**
   * Queues `item` under `key`; resolves with its own result. `bytes` is what the item weighs
   * against `maxBytes` (a task's payload, a result's text).
   */
  call(key: string, item: A, bytes = 0): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let batch = this.batches.get(key);
      if (!batch) {
        batch = { items: [], bytes: 0, waiters: [] };
        this.batches.set(key, batch);
      }
      batch.items.push(item);
      batch.bytes += bytes;
      batch.waiters.push({ resolve, reject });
      if (batch.items.length >= this.maxItems || batch.bytes >= this.maxBytes) {
        this.batches.delete(key);
        this.send(key, batch);
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Sends every batch gathered so far now, rather than when the turn's I/O callbacks have run: a
   * caller that has just issued commands its batches must follow in the same write (due-watch.ts).
   */
  flush(): void {
    this.scheduled = false;
    const batches = this.batches;
    this.batches = new Map();
    for (const [key, batch] of batches) this.send(key, batch);
  }

  private send(key: string, batch: Batch<A, R>): void {
    // A runner that throws instead of rejecting (a key it cannot build) fails its batch's calls,
    // not the process: the batch runs outside any caller's stack.
    let running: Promise<readonly R[]>;
    try {
      running = this.run(key, batch.items);
    } catch (err: unknown) {
      running = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    running.then(
      (results) => {
        batch.waiters.forEach((w, i) => {
          if (i < results.length) w.resolve(results[i] as R);
          else
            w.reject(
              new Error(`batch of ${batch.items.length} answered ${results.length} results`),
            );
        });
      },
      (err: unknown) => {
        for (const w of batch.waiters) w.reject(err);
      },
    );
  }
}
