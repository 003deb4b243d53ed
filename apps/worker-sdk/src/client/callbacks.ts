import type { CallbackItem, CallbacksReply } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { isReachHttpError, ReachClosedError, ResultTimeoutError } from '../errors.ts';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { LruMap } from '../util/lru.ts';
import { abortReason, sleep } from '../util/sleep.ts';

/** A callback item with a final status, as `ReachClient.result()` resolves with. */
export type FinalCallbackItem = CallbackItem & {
  status: 'completed' | 'failed' | 'dead' | 'cancelled';
};

/** True for a task's final item; false for a `progress`, `chunk` or `truncated` item. */
export function isFinalItem(item: CallbackItem): item is FinalCallbackItem {
  return (
    item.status === 'completed' ||
    item.status === 'failed' ||
    item.status === 'dead' ||
    item.status === 'cancelled'
  );
}

/** What the poller needs: one page of the topic after a cursor. */
export interface CallbackPollerContext {
  fetchPage(after: string, signal: AbortSignal): Promise<CallbacksReply>;
  maxBuffered: number;
  retry: CompiledBackoff;
  logger: Logger;
}

interface Waiter {
  resolve(item: FinalCallbackItem): void;
  reject(err: Error): void;
}

/**
 * Reads one callback topic by long poll and hands each item to whoever waits for its task_id.
 * One loop per client however many waiters; it runs only while someone waits (the topic itself
 * holds results meanwhile, and the cursor is kept), and items nobody waits for yet are kept in
 * a bounded map for a later `wait()`.
 */
export class CallbackPoller {
  #cursor = '0';
  #polling = false;
  #loop: Promise<void> = Promise.resolve();
  #closed = false;
  readonly #stop = new AbortController();
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #arrived: LruMap<string, FinalCallbackItem>;

  constructor(private readonly ctx: CallbackPollerContext) {
    this.#arrived = new LruMap(ctx.maxBuffered);
  }

  /** Cursor of the last page read (`0` before the first). */
  get cursor(): string {
    return this.#cursor;
  }

  /** Resolves with the task's item once it is on the topic; rejects on timeout, abort or close. */
  wait(taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<FinalCallbackItem> {
    const arrived = this.#arrived.get(taskId);
    if (arrived !== undefined) return Promise.resolve(arrived);
    if (this.#closed) return Promise.reject(new ReachClosedError('client'));
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise<FinalCallbackItem>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const set = this.#waiters.get(taskId);
        set?.delete(waiter);
        if (set?.size === 0) this.#waiters.delete(taskId);
      };
      const waiter: Waiter = {
        resolve: (item) => {
          settle();
          resolve(item);
        },
        reject: (err) => {
          settle();
          reject(err);
        },
      };
      const onAbort = (): void =>
        waiter.reject(signal === undefined ? new Error('aborted') : abortReason(signal));
      const timer = setTimeout(
        () => waiter.reject(new ResultTimeoutError(taskId, timeoutMs)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.#waiters.get(taskId);
      if (set === undefined) this.#waiters.set(taskId, (set = new Set()));
      set.add(waiter);
      this.#ensurePolling();
    });
  }

  /** Stops polling and rejects every waiter with {@link ReachClosedError}. Idempotent. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#stop.abort(new ReachClosedError('client'));
      this.#rejectAll(new ReachClosedError('client'));
    }
    await this.#loop;
  }

  #ensurePolling(): void {
    if (this.#polling || this.#closed) return;
    this.#polling = true;
    this.#loop = this.#run();
  }

  #rejectAll(err: Error): void {
    for (const set of [...this.#waiters.values()]) for (const w of [...set]) w.reject(err);
  }

  async #run(): Promise<void> {
    const backoff = new Backoff(this.ctx.retry);
    for (;;) {
      // Decided synchronously with the flag, so a wait() arriving now either sees the loop or starts one.
      if (this.#closed || this.#waiters.size === 0) {
        this.#polling = false;
        return;
      }
      try {
        const page = await this.ctx.fetchPage(this.#cursor, this.#stop.signal);
        this.#cursor = page.cursor;
        for (const item of page.items) this.#deliver(item);
        backoff.reset();
      } catch (err: unknown) {
        if (this.#closed) continue;
        if (
          isReachHttpError(err) &&
          err.status >= 400 &&
          err.status < 500 &&
          err.status !== 408 &&
          err.status !== 429
        ) {
          // Asking again will not help (a bad topic, say): tell the waiters instead of letting them time out.
          this.ctx.logger.error({ err }, 'callback poll refused');
          this.#rejectAll(err);
        }
        const delayMs = backoff.next();
        this.ctx.logger.warn({ err, delayMs }, 'callback poll failed; retrying');
        await sleep(delayMs, this.#stop.signal);
      }
    }
  }

  #deliver(item: CallbackItem): void {
    // A task submitted with `stream: true` has non-final items on the topic too: only its final one is awaited here.
    if (!isFinalItem(item)) return;
    this.#arrived.set(item.task_id, item);
    const set = this.#waiters.get(item.task_id);
    if (set !== undefined) for (const w of [...set]) w.resolve(item);
  }
}
