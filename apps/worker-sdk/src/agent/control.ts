import { ControlField, fieldsToRecord, type RegisterReply } from '@agent-reach/protocol';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { sleep } from '../util/sleep.ts';

/** What the control reader needs from the agent. */
export interface ControlReaderContext {
  /** A connection of its own: its XREAD blocks. */
  redis: RedisClient;
  /** The current registration: its `control_stream` is read. */
  session(): RegisterReply | undefined;
  /** A `cancel` notice: stop the task (TaskRunner.cancel). */
  onCancel(taskId: string): void;
  /** How long one XREAD blocks, ms. */
  blockMs: number;
  logger: Logger;
}

type XReadReply = [string, [string, string[]][]][] | null;

/**
 * Reads the agent's control stream (`control_stream` of the register reply) on a connection of
 * its own, so a notice arrives while every slot is busy and the inbox is not read: a `cancel`
 * aborts the running handler's `signal` (or keeps a task not started yet from running).
 */
export class ControlReader {
  #state: 'idle' | 'running' | 'closed' = 'idle';
  #loop: Promise<void> | undefined;
  // From the start: notices older than this instance name cancelled tasks, which are never sent
  // again, so reading them costs a few lookups once and misses nothing that came meanwhile.
  #lastId = '0-0';

  constructor(private readonly ctx: ControlReaderContext) {}

  /** Starts reading; does nothing when started already or closed. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'running';
    this.#loop = this.#run();
  }

  /** Stops reading: the blocked read is cut short. Idempotent. */
  async stop(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    // Also when it waits to reconnect (its user gone): its pending read must end.
    disconnectNow(this.ctx.redis);
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#state === 'running') {
      const stream = this.ctx.session()?.control_stream;
      if (stream === undefined) return;
      let reply: XReadReply;
      try {
        reply = await this.ctx.redis.xread(
          'BLOCK',
          this.ctx.blockMs,
          'STREAMS',
          stream,
          this.#lastId,
        );
      } catch (err: unknown) {
        if (this.#state !== 'running') return;
        this.ctx.logger.debug({ err }, 'control read failed; retrying');
        await sleep(500);
        continue;
      }
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          this.#lastId = id;
          const notice = fieldsToRecord(fields);
          const taskId = notice[ControlField.taskId];
          if (notice[ControlField.kind] === 'cancel' && taskId) this.ctx.onCancel(taskId);
        }
      }
    }
  }
}
