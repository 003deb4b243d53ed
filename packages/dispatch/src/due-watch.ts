import type { Redis } from 'ioredis';

interface Watched {
  taskId: string;
  at: number;
  command: () => Promise<unknown>;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The due set's watchdog entries of the router's hot path, one command per event-loop tick
 * instead of one per task: the entries of every submission claimed in a tick go out in one
 * `ZADD NX`, immediately followed — same write on the auto-pipelined connection, in this order —
 * by the claims themselves, so a router that dies after a claim has always sent its watchdog
 * entry first. Their removals after the `sent` record are gathered the same way into one
 * conditional-removal script call (unwatch-1.lua).
 */
export class DueWatch {
  #adds: Watched[] = [];
  #drops: (string | number)[] = [];
  #dropsFlush: Promise<unknown> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly dueKey: string,
  ) {}

  /**
   * Adds the task's watchdog entry at `at` (unless one exists), then issues `command` — in the
   * tick's batch. Resolves with the command's reply; rejects if either fails.
   */
  watchThen<T>(taskId: string, at: number, command: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Inside the tick callback, so the ZADD and the commands join the same auto-pipelined write.
      if (
        this.#adds.push({
          taskId,
          at,
          command,
          resolve: resolve as (reply: unknown) => void,
          reject,
        }) === 1
      )
        process.nextTick(this.#flushAdds);
    });
  }

  /** Drops the task's watchdog entry if it still has the score `at` (a retry's entry stays). */
  unwatch(taskId: string, at: number): Promise<unknown> {
    this.#drops.push(taskId, at);
    return (this.#dropsFlush ??= new Promise<unknown>((resolve, reject) => {
      process.nextTick(() => {
        const args = this.#drops;
        this.#drops = [];
        this.#dropsFlush = undefined;
        this.redis.reachUnwatch(this.dueKey, ...args).then(resolve, reject);
      });
    }));
  }

  readonly #flushAdds = (): void => {
    const batch = this.#adds;
    this.#adds = [];
    const args: (string | number)[] = [];
    for (const w of batch) args.push(w.at, w.taskId);
    // Replies come in the order sent: a failed ZADD rejects its commands before their replies settle them.
    this.redis.zadd(this.dueKey, 'NX', ...args).catch((err: unknown) => {
      for (const w of batch) w.reject(err);
    });
    for (const w of batch) w.command().then(w.resolve, w.reject);
  };
}
