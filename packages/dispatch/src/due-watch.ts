import type { Redis } from 'ioredis';
import { watchdogMember } from '@agent-reach/protocol';

interface Watched {
  taskId: string;
  at: number;
  command: () => Promise<unknown>;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The due set's watchdog entries (`#<task_id>`, keys.ts `watchdogMember`) over sends in progress,
 * one command per event-loop tick instead of one per task: the entries of every submission claimed
 * in a tick go out in one `ZADD NX`, immediately followed — same write on the auto-pipelined
 * connection, in this order — by the claims themselves, so a router that dies after a claim has
 * always sent its watchdog entry first. Once the tasks are sent their entries go in one `ZREM`
 * per tick, without a check: the watchdog member is the sender's own, and a retry that a fast
 * failure scheduled meanwhile has the task's own member (`<task_id>`), which this never touches.
 */
export class DueWatch {
  #adds: Watched[] = [];
  #drops: string[] = [];
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

  /**
   * Turns the task's own due entry (a retry that is due) into a watchdog entry at `at`, in one
   * atomic step, before a sender takes the task: from then on the task's own member belongs to
   * whatever the attempt being sent leads to (a fast failure's retry), the watchdog to this send.
   */
  async takeOver(taskId: string, at: number): Promise<void> {
    await this.redis
      .multi()
      .zadd(this.dueKey, 'NX', at, watchdogMember(taskId))
      .zrem(this.dueKey, taskId)
      .exec();
  }

  /** Drops the task's watchdog entry: its send is done (sent, or handed back to the due set). */
  unwatch(taskId: string): Promise<unknown> {
    this.#drops.push(watchdogMember(taskId));
    return (this.#dropsFlush ??= new Promise<unknown>((resolve, reject) => {
      process.nextTick(() => {
        const members = this.#drops;
        this.#drops = [];
        this.#dropsFlush = undefined;
        this.redis.zrem(this.dueKey, ...members).then(resolve, reject);
      });
    }));
  }

  readonly #flushAdds = (): void => {
    const batch = this.#adds;
    this.#adds = [];
    const args: (string | number)[] = [];
    for (const w of batch) args.push(w.at, watchdogMember(w.taskId));
    // Replies come in the order sent: a failed ZADD rejects its commands before their replies settle them.
    this.redis.zadd(this.dueKey, 'NX', ...args).catch((err: unknown) => {
      for (const w of batch) w.reject(err);
    });
    for (const w of batch) w.command().then(w.resolve, w.reject);
  };
}
