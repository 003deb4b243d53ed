import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  encodeParked,
  keysOfAcksStream,
  parkedFieldsText,
  PARKED_MAXLEN,
  type RegisterReply,
} from '@agent-reach/protocol';
import type { ReadOrigin, StreamEntry } from './redis-util.ts';

/** What the parker needs from the agent. */
export interface EntryParkerContext {
  /** The command connection. */
  redis: RedisClient;
  /** The current registration: its `acks_stream` names the deployment's key prefix. */
  session(): RegisterReply | undefined;
  agentId: string;
  logger: Logger;
}

/**
 * Sets aside the inbox and pool entries no task can be read from (written by hand, with fields
 * missing, doubled, too long or of the wrong form): XADD to the deployment's parked stream
 * (`keys.parked()`, capped) with where the entry came from and why, and HINCRBY `parked:<source>`
 * in the stats hash. Best effort: where the agent may not write them (a Redis ACL user without
 * those keys), the entry is still skipped and the failure logged once.
 */
export class EntryParker {
  #parked = 0;
  #warned = false;

  constructor(private readonly ctx: EntryParkerContext) {}

  /** Entries this agent set aside since it started (parked or not). */
  get count(): number {
    return this.#parked;
  }

  /** Parks `entry`; never rejects. */
  async park(origin: ReadOrigin, entry: StreamEntry, reason: string): Promise<void> {
    this.#parked++;
    const keys = keysOfAcksStream(this.ctx.session()?.acks_stream ?? '');
    if (keys === undefined) return;
    const fields = encodeParked({
      source: origin.kind,
      stream: origin.stream,
      entry_id: entry.id,
      reason,
      fields: parkedFieldsText(entry.fields),
      by: `agent:${this.ctx.agentId}`,
    });
    const parkedKey = keys.parked();
    const statsKey = keys.stats();
    try {
      await Promise.all([
        this.ctx.redis.xadd(parkedKey, 'MAXLEN', '~', PARKED_MAXLEN, '*', ...fields),
        this.ctx.redis.hincrby(statsKey, `parked:${origin.kind}`, 1),
      ]);
    } catch (err: unknown) {
      if (this.#warned) return;
      this.#warned = true;
      this.ctx.logger.warn({ err }, 'malformed entries are skipped but cannot be parked');
    }
  }
}
