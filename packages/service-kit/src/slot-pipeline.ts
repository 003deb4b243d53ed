import { Cluster, type ChainableCommander, type Redis } from 'ioredis';
import { keySlot } from './key-slot.ts';

/** What a pipeline's `exec()` answers for each command: its error, or its reply. */
export type PipelineReply = [error: Error | null, reply: unknown];

/**
 * A pipeline whose commands may lie in different hash slots. One server takes them all in one
 * pipeline, as before; ioredis' Cluster client refuses a pipeline whose keys are served by
 * different masters, so there each group of commands goes into the pipeline of its slot's
 * masters (all pipelines sent at once, one round trip per master). `exec()` answers like one
 * pipeline's: one `[error, reply]` per command, in the order they were added.
 */
export class SlotPipeline {
  readonly #single: ChainableCommander | undefined;
  readonly #groups = new Map<string, ChainableCommander>();
  /** Each add(): its group's pipeline, where its commands start there, and how many. */
  readonly #added: { pipeline: ChainableCommander; start: number; count: number }[] = [];

  constructor(private readonly redis: Redis | Cluster) {
    if (!(redis instanceof Cluster)) this.#single = redis.pipeline();
  }

  /**
   * Queues commands that touch `key`'s slot only (keys of one hash tag), with `queue` called on
   * the pipeline they go to. Commands with no key may go with any group.
   */
  add(key: string, queue: (pipeline: ChainableCommander) => unknown): this {
    const pipeline = this.#single ?? this.#groupOf(key);
    const start = pipeline.length;
    queue(pipeline);
    this.#added.push({ pipeline, start, count: pipeline.length - start });
    return this;
  }

  /** How many commands were added. */
  get length(): number {
    return this.#added.reduce((n, a) => n + a.count, 0);
  }

  /** Sends every pipeline; replies in the order the commands were added. */
  async exec(): Promise<PipelineReply[]> {
    if (this.#added.length === 0) return [];
    const pipelines = this.#single ? [this.#single] : [...this.#groups.values()];
    const replies = new Map<ChainableCommander, PipelineReply[]>();
    await Promise.all(
      pipelines.map(async (p) => {
        try {
          replies.set(p, (await p.exec()) ?? []);
        } catch (err: unknown) {
          // A pipeline refused whole (a connection lost, a CROSSSLOT): each command failed.
          const error = err instanceof Error ? err : new Error(String(err));
          replies.set(
            p,
            Array.from({ length: p.length }, (): PipelineReply => [error, null]),
          );
        }
      }),
    );
    const out: PipelineReply[] = [];
    for (const { pipeline, start, count } of this.#added) {
      const got = replies.get(pipeline) ?? [];
      for (let i = start; i < start + count; i++)
        out.push(got[i] ?? [new Error('pipeline: no reply'), null]);
    }
    return out;
  }

  #groupOf(key: string): ChainableCommander {
    const cluster = this.redis as Cluster;
    const slot = keySlot(key);
    // The masters serving the slot (ioredis' own test: a pipeline may span their slots).
    const group = cluster.slots[slot]?.join(',') ?? `slot:${slot}`;
    let pipeline = this.#groups.get(group);
    if (pipeline === undefined) {
      pipeline = cluster.pipeline();
      this.#groups.set(group, pipeline);
    }
    return pipeline;
  }
}

/** A {@link SlotPipeline} on `redis`. */
export function slotPipeline(redis: Redis | Cluster): SlotPipeline {
  return new SlotPipeline(redis);
}
