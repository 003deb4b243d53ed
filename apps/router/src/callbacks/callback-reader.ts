import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeCallback,
  type CallbackItem,
  type CallbacksReply,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { BlockingPool } from './blocking-pool.ts';
import { RawJson } from './raw-json.ts';

type XReadReply = [string, [string, string[]][]][] | null;

/** What a callback reader needs. */
export interface CallbackReaderOptions {
  redis: RedisClient;
  pool: BlockingPool;
  keys: ReachKeys;
}

/** Reads a callback topic from a cursor, long-polling when nothing is there yet. */
export class CallbackReader {
  constructor(private readonly o: CallbackReaderOptions) {}

  /** Items after `after` (exclusive), waiting up to `waitMs` for the first one. */
  async read(topic: string, after: string, waitMs: number, limit: number): Promise<CallbacksReply> {
    const key = this.o.keys.callback(topic);
    let reply: XReadReply = await this.o.redis.xread('COUNT', limit, 'STREAMS', key, after);
    if (!reply && waitMs > 0) {
      reply = await this.o.pool.use((conn) =>
        conn.xread('COUNT', limit, 'BLOCK', waitMs, 'STREAMS', key, after),
      );
    }
    const entries = reply?.[0]?.[1] ?? [];
    const items: CallbackItem[] = entries.map(([id, fields]) => {
      const msg = decodeCallback(fields);
      const item: CallbackItem = {
        id,
        task_id: msg.task_id,
        status: msg.status,
        capability: msg.capability,
        agent_id: msg.agent_id,
        attempt: msg.attempt,
        completed_at: msg.completed_at,
      };
      // Spliced into the reply as the JSON text it is (callbacksReplyJson), never parsed here.
      if (msg.result !== undefined) item.result = new RawJson(msg.result);
      if (msg.error !== undefined) item.error = msg.error;
      if (msg.duration_ms !== undefined) item.duration_ms = msg.duration_ms;
      // A `stream: true` task's non-final items.
      if (msg.progress !== undefined) item.progress = new RawJson(msg.progress);
      if (msg.chunk !== undefined) item.chunk = msg.chunk;
      return item;
    });
    const last = entries[entries.length - 1];
    return { items, cursor: last ? last[0] : after };
  }
}
