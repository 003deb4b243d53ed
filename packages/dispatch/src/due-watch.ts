import type { Redis } from 'ioredis';

interface Watched {
  taskId: string;
  at: number;
  issue(): void;
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
  #addsFlush: Promise<void> | undefined;
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
    let result!: Promise<T>;
    const issued = new Promise<void>((resolve) => {
      this.#adds.push({
        taskId,
        at,
        issue: () => {
          result = command();
          resolve();
        },
      });
    });
    const added = (this.#addsFlush ??= this.#scheduleAdds());
    return Promise.all([added, issued.then(() => result)]).then(([, reply]) => reply);
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

  #scheduleAdds(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Inside the tick callback, so the ZADD and the claims join the same auto-pipelined write.
      process.nextTick(() => {
        const batch = this.#adds;
        this.#adds = [];
        this.#addsFlush = undefined;
        const args: (string | number)[] = [];
        for (const w of batch) args.push(w.at, w.taskId);
        this.redis.zadd(this.dueKey, 'NX', ...args).then(() => resolve(), reject);
        for (const w of batch) w.issue();
      });
    });
  }
}
