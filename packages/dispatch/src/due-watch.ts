import { inOneWrite, isCluster, type RedisClient } from '@agent-reach/service-kit/redis';
import { Coalescer, watchdogMember, type ReachKeys } from '@agent-reach/protocol';

interface Watched {
  taskId: string;
  at: number;
  command: () => Promise<unknown>;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/** What a {@link DueWatch} reads with. */
export interface DueWatchOptions {
  redis: RedisClient;
  keys: Pick<ReachKeys, 'dueOf'>;
  /**
   * Called once a tick's watched commands are issued, right after its entries: a batcher those
   * commands went to (the claims' `ClaimBatch`) sends its batch now, so the entries and the
   * commands leave in one write, in that order.
   */
  issued?: () => void;
}

/**
 * The due set's watchdog entries (`#<task_id>`, keys.ts `watchdogMember`) over sends in progress,
 * one command per event-loop turn instead of one per task: the entries of every submission claimed
 * in a turn (gathered until its I/O callbacks have run, as the claims are) go out in one `ZADD NX`
 * per shard of the due set, immediately followed — on the same connection, without waiting, in
 * this order — by the claims themselves (`issued` sends their batch at once), so a router that
 * dies after a claim has always sent its watchdog entry first (on a Redis Cluster, where the two
 * may live on different masters, the claims wait for their entry's reply instead). Once the tasks
 * are sent their entries go in one `ZREM` per shard and tick, without a check: the watchdog member
 * is the sender's own, and a retry that a fast failure scheduled meanwhile has the task's own
 * member (`<task_id>`), which this never touches.
 */
export class DueWatch {
  #adds: Watched[] = [];
  #drops: string[] = [];
  #dropsFlush: Promise<unknown> | undefined;
  /** The tick's moves of watchdog entries, per shard of the due set: one `ZADD XX` each. */
  readonly #moves: Coalescer<{ at: number; member: string }, undefined>;

  /** The due set's shards come from `keys.dueOf(taskId)`: one command per shard and tick. */
  constructor(private readonly o: DueWatchOptions) {
    this.#moves = new Coalescer(async (due, moves) => {
      await this.o.redis.zadd(due, 'XX', ...moves.flatMap((m) => [m.at, m.member]));
      return moves.map(() => undefined);
    });
  }

  /**
   * Moves the task's watchdog entry to `at` if it has one (`ZADD XX`), in the tick's one command
   * for its shard of the due set: a task taken from its waiting room is covered for its send,
   * and back at its deadline should it go back.
   */
  move(taskId: string, at: number): Promise<undefined> {
    return this.#moves.call(this.o.keys.dueOf(taskId), { at, member: watchdogMember(taskId) });
  }

  /**
   * Adds the task's watchdog entry at `at` (unless one exists), then issues `command` — in the
   * tick's batch. Resolves with the command's reply; rejects if either fails.
   */
  watchThen<T>(taskId: string, at: number, command: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // At the end of the turn's I/O callbacks, with the claims the turn gathered (Coalescer).
      if (
        this.#adds.push({
          taskId,
          at,
          command,
          resolve: resolve as (reply: unknown) => void,
          reject,
        }) === 1
      )
        setImmediate(this.#flushAdds);
    });
  }

  /**
   * Turns the task's own due entry (a retry that is due) into a watchdog entry at `at`, in one
   * atomic step, before a sender takes the task: from then on the task's own member belongs to
   * whatever the attempt being sent leads to (a fast failure's retry), the watchdog to this send.
   */
  async takeOver(taskId: string, at: number): Promise<void> {
    const due = this.o.keys.dueOf(taskId);
    await this.o.redis.multi().zadd(due, 'NX', at, watchdogMember(taskId)).zrem(due, taskId).exec();
  }

  /** Drops the task's watchdog entry: its send is done (sent, or handed back to the due set). */
  unwatch(taskId: string): Promise<unknown> {
    this.#drops.push(taskId);
    return (this.#dropsFlush ??= new Promise<unknown>((resolve, reject) => {
      process.nextTick(() => {
        const byKey = this.#byKey(this.#drops, (taskId) => [watchdogMember(taskId)]);
        this.#drops = [];
        this.#dropsFlush = undefined;
        Promise.all(
          [...byKey].map(([due, members]) => this.o.redis.zrem(due, ...(members as string[]))),
        ).then(resolve, reject);
      });
    }));
  }

  /** The arguments of each task grouped by its shard of the due set. */
  #byKey<T>(items: readonly T[], args: (item: T) => (string | number)[]) {
    const byKey = new Map<string, (string | number)[]>();
    for (const item of items) {
      const key = this.o.keys.dueOf(typeof item === 'string' ? item : (item as Watched).taskId);
      const list = byKey.get(key);
      if (list) list.push(...args(item));
      else byKey.set(key, args(item));
    }
    return byKey;
  }

  readonly #flushAdds = (): void => {
    const batch = this.#adds;
    this.#adds = [];
    const byKey = this.#byKey(batch, (w) => [w.at, watchdogMember(w.taskId)]);
    if (isCluster(this.o.redis)) {
      // On a Cluster the entry and the claim may go to different masters, on different sockets:
      // the claim waits for its entry, so a master down (or killed) under the due set's shard
      // never leaves a claimed task that no entry covers. One round trip more per tick.
      for (const [due, args] of byKey) {
        const added = this.o.redis.zadd(due, 'NX', ...args);
        for (const w of batch) {
          if (this.o.keys.dueOf(w.taskId) === due)
            added.then(() => w.command()).then(w.resolve, w.reject);
        }
      }
      return;
    }
    // The entries and the commands they cover leave in one write. Replies come in the order
    // sent: a failed ZADD rejects its commands before their replies settle them.
    inOneWrite(this.o.redis, () => {
      for (const [due, args] of byKey) {
        this.o.redis.zadd(due, 'NX', ...args).catch((err: unknown) => {
          for (const w of batch) if (this.o.keys.dueOf(w.taskId) === due) w.reject(err);
        });
      }
      for (const w of batch) w.command().then(w.resolve, w.reject);
      this.o.issued?.();
    });
  };
}
