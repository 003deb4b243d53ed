import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { settlesWithin, sleep } from '../util/sleep.ts';
import { ReadPlanner } from './read-plan.ts';
import { parseReadReply, redisErrorCode, type ReadOrigin } from './redis-util.ts';
import type { Delivery, TaskRunner } from './runner.ts';
import type { Slots } from './slots.ts';

/** Where to read: the streams, their group and this instance's consumer name. */
export interface ReadSource {
  group: string;
  consumer: string;
  /** The agent's own inbox: always read (probes and re-routed tasks come here, also for pull agents). */
  inbox: string;
  /** Pull agents: the pool streams of their capabilities; empty for push agents. */
  pools: readonly string[];
}

/** What the read loop needs from the agent. */
export interface ConsumerContext {
  /** Dedicated connection: XREADGROUP BLOCK holds it. */
  blocking: RedisClient;
  /** Command connection, used to CLIENT UNBLOCK the blocking one at stop. */
  control: RedisClient;
  /** The current registration's streams and group (read every loop, so a re-registration that moves them is followed). */
  source(): ReadSource | undefined;
  runner: TaskRunner;
  slots: Slots;
  blockMs: number;
  retry: CompiledBackoff;
  logger: Logger;
  /** A stream or group is gone (Redis lost its data): the registry must create them again. */
  onGroupMissing(): void;
}

/**
 * The read loop: `while (!stopping)` wait for a free slot, XREADGROUP at most that many entries
 * over the inbox (and a pull agent's pools), hand them to the runner. {@link ReadPlanner} shapes
 * each call: first this consumer's own pending entries (after a crash, a restart with the same
 * instance_id picks up what it had read and never acknowledged), then new ones, never more than
 * the free slots in total.
 */
export class Consumer {
  #stopping = false;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #clientId: number | undefined;
  #blocked = false;
  readonly #plan = new ReadPlanner();

  constructor(private readonly ctx: ConsumerContext) {
    // A reconnect gets a new client id; fetch it again before the next read.
    ctx.blocking.on('close', () => {
      this.#clientId = undefined;
    });
  }

  /** Starts the loop (once). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /**
   * Stops reading: interrupts the BLOCK with CLIENT UNBLOCK (entries are never read and then
   * dropped, as a disconnect mid-read could do), and resolves once the loop has exited.
   * Falls back to dropping the blocking connection if Redis cannot be reached.
   */
  async stop(): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      this.#stop.abort();
      await this.#unblock();
    }
    if (this.#loop === undefined) return;
    if (!(await settlesWithin(this.#loop, this.ctx.blockMs + 1000))) {
      this.ctx.logger.warn('read loop did not stop in time; dropping its connection');
      this.ctx.blocking.disconnect();
      await this.#loop;
    }
  }

  async #unblock(): Promise<void> {
    const id = this.#clientId;
    if (!this.#blocked || id === undefined) return;
    try {
      await this.ctx.control.client('UNBLOCK', id);
    } catch (err: unknown) {
      this.ctx.logger.debug({ err }, 'CLIENT UNBLOCK failed; the read ends at its BLOCK timeout');
    }
  }

  async #run(): Promise<void> {
    const backoff = new Backoff(this.ctx.retry);
    while (!this.#stopping) {
      await this.ctx.slots.whenFree(this.#stop.signal);
      const source = this.ctx.source();
      if (this.#stopping || source === undefined) break;
      try {
        await this.#readOnce(source);
        backoff.reset();
      } catch (err: unknown) {
        if (this.#stopping) break;
        const code = redisErrorCode(err);
        const delayMs = backoff.next();
        if (code === 'NOGROUP') {
          this.ctx.logger.error(
            { err, group: source.group, delayMs },
            'stream or group missing; re-registering',
          );
          this.ctx.onGroupMissing();
        } else {
          this.ctx.logger.warn({ err, delayMs }, 'read failed; retrying');
        }
        await sleep(delayMs, this.#stop.signal);
      }
    }
    this.ctx.logger.debug('read loop stopped');
  }

  async #readOnce(source: ReadSource): Promise<void> {
    const { blocking } = this.ctx;
    this.#clientId ??= await blocking.client('ID');
    if (this.#stopping) return;
    const origins = originsOf(source);
    const call = this.#plan.next([...origins.keys()], this.ctx.slots.free);
    const { group, consumer } = source;
    const keysAndIds = [...call.streams, ...call.ids];
    this.#blocked = call.block;
    let reply: unknown;
    try {
      reply = call.block
        ? await blocking.xreadgroup(
            'GROUP',
            group,
            consumer,
            'COUNT',
            call.count,
            'BLOCK',
            this.ctx.blockMs,
            'STREAMS',
            ...keysAndIds,
          )
        : await blocking.xreadgroup(
            'GROUP',
            group,
            consumer,
            'COUNT',
            call.count,
            'STREAMS',
            ...keysAndIds,
          );
    } finally {
      this.#blocked = false;
    }
    const entries = parseReadReply(reply);
    const { resumed } = this.#plan.done(call, entries);
    if (resumed > 0)
      this.ctx.logger.info(
        { count: resumed, stream: call.streams[0] },
        'resuming tasks this instance read before and never acknowledged',
      );
    if (entries.length === 0) return;
    this.ctx.slots.take(entries.length);
    const release = (): void => this.ctx.slots.release();
    const batch: Delivery[] = [];
    for (const entry of entries) {
      const origin = origins.get(entry.stream);
      if (origin !== undefined) batch.push({ entry, origin });
      else {
        // Unreachable: Redis answers only for the streams asked.
        this.ctx.logger.error(
          { stream: entry.stream, messageId: entry.id },
          'entry from a stream not read; left pending',
        );
        release();
      }
    }
    for (const done of this.ctx.runner.accept(batch)) {
      void done.then(release, (err: unknown) => {
        this.ctx.logger.error({ err }, 'task handling failed unexpectedly');
        release();
      });
    }
  }
}

/** The streams to read, inbox first (probes and re-routed tasks go before pool work), each with its origin. */
function originsOf(source: ReadSource): Map<string, ReadOrigin> {
  const origins = new Map<string, ReadOrigin>([
    [source.inbox, { stream: source.inbox, group: source.group, kind: 'inbox' }],
  ]);
  for (const stream of source.pools)
    if (!origins.has(stream)) origins.set(stream, { stream, group: source.group, kind: 'pool' });
  return origins;
}
