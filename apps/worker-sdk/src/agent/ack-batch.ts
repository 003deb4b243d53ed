import { Cluster } from 'ioredis';
import {
  sendFlatAll,
  slotPipeline,
  type PipelineReply,
  type RedisClient,
} from '@agent-reach/service-kit/redis';
import type { ReadOrigin } from './redis-util.ts';

/** One ack entry of a tick: its fields, and the stream entry to XACK once it is written. */
interface Queued {
  fields: string[];
  xack: { origin: ReadOrigin; messageId: string } | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The ack entries of one turn of the event loop, written together: an XADD per entry, then one
 * XACK per stream and group for the entries of those that carry one — a single write to Redis, in
 * that order, so an entry is never XACKed before its completion was sent.
 *
 * It does what the connection's auto-pipelining did for these commands (which leave by
 * `setImmediate` too), without what auto-pipelining adds to each command — a second promise, a
 * callback, a `process.nextTick`, a copy of its arguments — and with the XACKs in the same write
 * instead of the next one.
 * On a Redis Cluster the acks stream and the streams read lie in different slots: each group of
 * commands goes to its slot's master (`slotPipeline`).
 */
export class AckBatch {
  #queued: Queued[] = [];
  /** The acks stream of the queued entries. */
  #stream = '';
  #scheduled = false;

  /** @param redis - the command connection (never the blocking one) */
  constructor(private readonly redis: RedisClient) {}

  /**
   * Queues an XADD of `fields` to `stream` (the session's acks stream: every entry of a tick
   * goes to the same one) and, with `xack`, the XACK of that entry after it. Resolves once both
   * are answered; rejects with the first error of either.
   */
  add(
    stream: string,
    fields: string[],
    xack?: { origin: ReadOrigin; messageId: string },
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#queued.length > 0 && this.#stream !== stream) this.#flush();
      this.#stream = stream;
      this.#queued.push({ fields, xack, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#onImmediate);
      }
    });
  }

  readonly #onImmediate = (): void => {
    this.#scheduled = false;
    this.#flush();
  };

  #flush(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    const stream = this.#stream;
    // Entry ids per stream and group, in the order read; and which XACK each entry waits for.
    const xacks = new Map<string, { origin: ReadOrigin; ids: string[]; index: number }>();
    const xackOf: (number | undefined)[] = [];
    for (const q of queued) {
      if (q.xack === undefined) {
        xackOf.push(undefined);
        continue;
      }
      const { origin, messageId } = q.xack;
      const key = `${origin.group}\n${origin.stream}`;
      let group = xacks.get(key);
      if (group === undefined) {
        group = { origin, ids: [], index: queued.length + xacks.size };
        xacks.set(key, group);
      }
      group.ids.push(messageId);
      xackOf.push(group.index);
    }
    // The XADDs, then the XACKs: each command's key is its first argument.
    const commands: [string, string[]][] = [];
    for (const q of queued) commands.push(['xadd', [stream, '*', ...q.fields]]);
    for (const { origin, ids } of xacks.values())
      commands.push(['xack', [origin.stream, origin.group, ...ids]]);
    this.#send(commands).then(
      (replies) => {
        for (let i = 0; i < queued.length; i++) {
          const q = queued[i] as Queued;
          const x = xackOf[i];
          const added = replies[i];
          const acked = x === undefined ? undefined : replies[x];
          const err =
            added === undefined ? new Error('ack pipeline: no reply') : (added[0] ?? acked?.[0]);
          if (err) q.reject(err);
          else q.resolve();
        }
      },
      (err: unknown) => {
        for (const q of queued) q.reject(err);
      },
    );
  }

  /**
   * Writes `commands` in order and answers one `[error, reply]` per command. On one server each
   * is a flat command sent at once, all in one write; ioredis' pipeline object costs about twice
   * the CPU per entry (bench/results/2026-12-07-corked-writes.md). On a Cluster each goes to its
   * key's master (`slotPipeline`).
   */
  async #send(commands: readonly [name: string, args: string[]][]): Promise<PipelineReply[]> {
    const redis = this.redis;
    if (redis instanceof Cluster) {
      const pipeline = slotPipeline(redis);
      for (const [name, args] of commands)
        pipeline.add(args[0] as string, (p) => p.call(name, ...args));
      return pipeline.exec();
    }
    const settled = await Promise.allSettled(sendFlatAll(redis, commands));
    return settled.map((r): PipelineReply =>
      r.status === 'fulfilled'
        ? [null, r.value]
        : [r.reason instanceof Error ? r.reason : new Error(String(r.reason)), null],
    );
  }
}
