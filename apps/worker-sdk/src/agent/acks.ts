import {
  encodeAck,
  MAX_RENEW_TASK_IDS,
  RENEW_STAGE,
  RELEASED_CONSUMER,
  withAckSignature,
  type AckMessage,
  type ProbeHealth,
  type RegisterReply,
} from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { sleep } from '../util/sleep.ts';
import { AckBatch } from './ack-batch.ts';
import { CREDENTIAL_ERROR_CODES } from './credentials.ts';
import { redisErrorCode, type ReadOrigin } from './redis-util.ts';

/** The final report of a task: completed with a result, or failed. */
export type TaskOutcome =
  | { stage: 'completed'; result: string; durationMs: number; health?: ProbeHealth }
  | {
      stage: 'failed';
      error: string;
      /** The failure's code (`error_code`); the server takes HANDLER_ERROR without one. */
      errorCode?: string;
      retryable: boolean;
      durationMs?: number;
      /** A probe's: the health check's answer with its dependencies (the ack's `health`). */
      health?: ProbeHealth;
    };

/** A `progress` or `chunk` ack's own part (docs/PROTOCOL.md §4, Progress and streamed output). */
export type OutputAck =
  { stage: 'progress'; progress: string } | { stage: 'chunk'; chunks: string[] };

/** What the ack writer needs from the agent. */
export interface AckWriterContext {
  /** Command connection (never the blocking one). */
  redis: RedisClient;
  /** The current registration: acks carry its epoch and go to its acks stream. */
  session(): RegisterReply | undefined;
  retry: CompiledBackoff;
  logger: Logger;
  /** Aborted at the end of a forced shutdown: pending writes give up instead of retrying on. */
  stop: AbortSignal;
}

/** A task as far as acks are concerned. */
export interface AckTarget {
  taskId: string;
  attempt: number;
  messageId: string;
  origin: ReadOrigin;
  /** Read from a capability pool: that capability. Every ack then carries it and the entry's id. */
  pool?: string;
  /** The task's capability: a completion carries it, so the server updates the agent's speed in the same step. */
  capability?: string;
  /**
   * Its receipt: `pending` until the batch's receipts go out (one tick after the read), then
   * `sent`, or `folded` when the task ended first and its final ack stands for the receipt too.
   */
  receipt?: 'pending' | 'sent' | 'folded';
  /** performance.now() when the entry was read. */
  readAt?: number;
  /** The worker's `ack` span while spans are exported: the completion or failure carries it. */
  traceparent?: string;
}

/**
 * Writes receipts, completions and failures to the acks stream; those of a task read from a
 * pool carry `pool` and `message_id`, which the server needs to settle the pool entry. The
 * receipts, completions and failures of one tick leave in one write with their XACKs
 * ({@link AckBatch}). Writes are retried with backoff across Redis outages (a lost completion
 * would make the server run the task again); a Redis error *reply* is not retried, since sending
 * the same command again cannot fix it.
 */
export class AckWriter {
  readonly #batch: AckBatch;

  constructor(private readonly ctx: AckWriterContext) {
    this.#batch = new AckBatch(ctx.redis);
  }

  /** XADDs `received` for every task of a read batch in one round trip. */
  async receipts(targets: readonly AckTarget[]): Promise<void> {
    if (targets.length === 0) return;
    await this.#write('received', targets.length, (session) => {
      const entries = targets.map((t) => ackFields(session, this.#ack(session, t, 'received')));
      return Promise.all(entries.map((f) => this.#batch.add(session.acks_stream, f)));
    });
  }

  /**
   * XADDs the completion or failure and XACKs the entry: the completions of the same tick leave
   * in one write, in order, their XACKs after them in the same write. A task whose receipt was
   * folded reports `received_ago_ms`, and the server records both stages from it.
   */
  finish(target: AckTarget, outcome: TaskOutcome): Promise<void> {
    const receivedAgoMs =
      target.receipt === 'folded' && target.readAt !== undefined
        ? Math.max(0, Math.round(performance.now() - target.readAt))
        : undefined;
    const xack = { origin: target.origin, messageId: target.messageId };
    return this.#write(outcome.stage, 1, (session) => {
      // Fields set one by one, no spread objects: this runs for every task.
      const ack = this.#ack(session, target, outcome.stage);
      if (outcome.stage === 'completed') {
        ack.result = outcome.result;
        ack.duration_ms = outcome.durationMs;
        if (target.capability) ack.capability = target.capability;
      } else {
        ack.error = outcome.error;
        if (outcome.errorCode) ack.error_code = outcome.errorCode;
        ack.retryable = outcome.retryable;
        ack.duration_ms = outcome.durationMs;
      }
      if (receivedAgoMs !== undefined) ack.received_ago_ms = receivedAgoMs;
      if (target.traceparent) ack.traceparent = target.traceparent;
      if (outcome.health) ack.health = outcome.health;
      return this.#batch.add(session.acks_stream, ackFields(session, ack), xack);
    });
  }

  /**
   * XADDs one `renew` ack for the given running tasks (several past MAX_RENEW_TASK_IDS), renewing
   * their execution leases. Tried once: the next renewal comes a third of a lease later.
   */
  async renew(taskIds: readonly string[]): Promise<void> {
    const session = this.ctx.session();
    if (session === undefined || taskIds.length === 0) return;
    // Every entry is encoded before the first is written: a throw leaves no write unwatched.
    const entries: string[][] = [];
    for (let i = 0; i < taskIds.length; i += MAX_RENEW_TASK_IDS) {
      const ids = taskIds.slice(i, i + MAX_RENEW_TASK_IDS);
      const ack: AckMessage = {
        task_id: ids[0] as string,
        stage: RENEW_STAGE,
        agent_id: session.agent_id,
        instance_id: session.instance_id,
        epoch: session.epoch,
        attempt: 0,
        task_ids: ids,
      };
      entries.push(ackFields(session, ack));
    }
    await Promise.all(entries.map((f) => this.ctx.redis.xadd(session.acks_stream, '*', ...f)));
  }

  /**
   * XADDs a running task's output acks, in order, in one write (the connection is
   * auto-pipelined); retried with backoff like a completion, which waits for them.
   */
  async output(target: AckTarget, acks: readonly OutputAck[]): Promise<void> {
    if (acks.length === 0) return;
    await this.#write('output', acks.length, (session) => {
      const entries = acks.map((a) =>
        ackFields(session, Object.assign(this.#ack(session, target, a.stage), a)),
      );
      return Promise.all(entries.map((f) => this.ctx.redis.xadd(session.acks_stream, '*', ...f)));
    });
  }

  /** XACKs an entry that cannot be run (undecodable or trimmed), so it is not delivered again. */
  async drop(origin: ReadOrigin, messageId: string): Promise<void> {
    await this.#write('drop', 1, () => this.ctx.redis.xack(origin.stream, origin.group, messageId));
  }

  /**
   * Hands a pool entry this agent may not take to the group's {@link RELEASED_CONSUMER}: it stays
   * pending in the group, unacknowledged and unreported, off this consumer's list, and
   * registry-sync puts it back in the pool for an agent that may take it. If the hand-over
   * fails, the entry stays on this consumer's list and registry-sync takes it back after the
   * receipt timeout, so a failure is only logged.
   */
  async release(origin: ReadOrigin, messageId: string): Promise<void> {
    try {
      await this.ctx.redis.xclaim(
        origin.stream,
        origin.group,
        RELEASED_CONSUMER,
        0,
        messageId,
        'JUSTID',
      );
    } catch (err: unknown) {
      this.ctx.logger.warn(
        { err, stream: origin.stream, messageId },
        'could not release a pool entry; the server puts it back after the receipt timeout',
      );
    }
  }

  #ack(session: RegisterReply, t: AckTarget, stage: AckMessage['stage']): AckMessage {
    const ack: AckMessage = {
      task_id: t.taskId,
      stage,
      agent_id: session.agent_id,
      instance_id: session.instance_id,
      epoch: session.epoch,
      attempt: t.attempt,
    };
    if (t.pool !== undefined) {
      ack.pool = t.pool;
      ack.message_id = t.messageId;
    }
    return ack;
  }

  /** Sends once; a failure goes on in {@link #retry}. */
  #write(
    what: string,
    count: number,
    send: (session: RegisterReply) => Promise<unknown>,
  ): Promise<void> {
    const session = this.ctx.session();
    if (session === undefined) {
      // Unreachable in practice: the consumer starts only once registered.
      this.ctx.logger.error({ what, count }, 'ack before registration; dropped');
      return Promise.resolve();
    }
    let sent: Promise<unknown>;
    try {
      sent = send(session);
    } catch (err: unknown) {
      return this.#retry(what, count, send, err);
    }
    return sent.then(
      () => undefined,
      (err: unknown) => this.#retry(what, count, send, err),
    );
  }

  async #retry(
    what: string,
    count: number,
    send: (session: RegisterReply) => Promise<unknown>,
    failure: unknown,
  ): Promise<void> {
    const backoff = new Backoff(this.ctx.retry);
    let err = failure;
    for (;;) {
      const code = redisErrorCode(err);
      // Credentials being issued again (Redis restarted, back from OFFLINE) are worth waiting for.
      if (code !== undefined && !CREDENTIAL_ERROR_CODES.includes(code)) {
        this.ctx.logger.error({ err, what, count }, 'redis refused an ack write; not retrying');
        return;
      }
      if (this.ctx.stop.aborted) {
        this.ctx.logger.warn(
          { err, what, count },
          'ack write abandoned at shutdown; the server will retry the task',
        );
        return;
      }
      const delayMs = backoff.next();
      this.ctx.logger.warn({ err, what, count, delayMs }, 'ack write failed; retrying');
      await sleep(delayMs, this.ctx.stop);
      const session = this.ctx.session();
      if (session === undefined) {
        this.ctx.logger.error({ what, count }, 'ack before registration; dropped');
        return;
      }
      try {
        await send(session);
        return;
      } catch (next: unknown) {
        err = next;
      }
    }
  }
}

/**
 * An ack's entry fields, signed when the registration carried an `ack_key` (the registry then
 * refuses unsigned acks; docs/PROTOCOL.md §4).
 */
function ackFields(session: RegisterReply, ack: AckMessage): string[] {
  const fields = encodeAck(ack);
  return session.ack_key === undefined ? fields : withAckSignature(fields, session.ack_key);
}
