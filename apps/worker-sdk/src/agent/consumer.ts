import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { settlesWithin, sleep } from '../util/sleep.ts';
import { parseReadReply, redisErrorCode, type ReadOrigin } from './redis-util.ts';
import type { TaskRunner } from './runner.ts';
import type { Slots } from './slots.ts';

/** Where to read: the stream, its group and this instance's consumer name. */
export interface ReadSource extends ReadOrigin {
  consumer: string;
}

/** What the read loop needs from the agent. */
export interface ConsumerContext {
  /** Dedicated connection: XREADGROUP BLOCK holds it. */
  blocking: Redis;
  /** Command connection, used to CLIENT UNBLOCK the blocking one at stop. */
  control: Redis;
  /** The current registration's stream and group (read every loop, so a re-registration that moves them is followed). */
  source(): ReadSource | undefined;
  runner: TaskRunner;
  slots: Slots;
  blockMs: number;
  retry: CompiledBackoff;
  logger: Logger;
  /** The stream or group is gone (Redis lost its data): the registry must create them again. */
  onGroupMissing(): void;
}

/**
 * The read loop: `while (!stopping)` wait for a free slot, XREADGROUP at most that many entries,
 * hand them to the runner. It first reads this consumer's own pending entries (id `0`): after a
 * crash, a restart with the same instance_id picks up what it had read and never acknowledged.
 */
export class Consumer {
  #stopping = false;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #clientId: number | undefined;
  #blocked = false;
  /** `0`-based cursor through our own pending entries, then `>` for new ones. */
  #cursor = '0';

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
          this.ctx.logger.error({ err, stream: source.stream, group: source.group, delayMs }, 'stream or group missing; re-registering');
          this.#cursor = '0';
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
    const count = this.ctx.slots.free;
    const history = this.#cursor !== '>';
    this.#blocked = !history;
    let reply: unknown;
    try {
      reply = history
        ? await blocking.xreadgroup('GROUP', source.group, source.consumer, 'COUNT', count, 'STREAMS', source.stream, this.#cursor)
        : await blocking.xreadgroup('GROUP', source.group, source.consumer, 'COUNT', count, 'BLOCK', this.ctx.blockMs, 'STREAMS', source.stream, '>');
    } finally {
      this.#blocked = false;
    }
    const entries = parseReadReply(reply);
    if (history) {
      const last = entries.at(-1);
      if (last === undefined) this.#cursor = '>';
      else {
        this.#cursor = last.id;
        this.ctx.logger.info({ count: entries.length }, 'resuming tasks this instance read before and never acknowledged');
      }
    }
    if (entries.length === 0) return;
    this.ctx.slots.take(entries.length);
    const release = (): void => this.ctx.slots.release();
    for (const done of this.ctx.runner.accept(entries, source)) {
      void done.then(release, (err: unknown) => {
        this.ctx.logger.error({ err }, 'task handling failed unexpectedly');
        release();
      });
    }
  }
}
