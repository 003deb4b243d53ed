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

/** How many topics' ends the reader remembers; past it, it forgets them all and starts over. */
const MAX_TIPS = 10_000;

/** Reads a callback topic from a cursor, long-polling when nothing is there yet. */
export class CallbackReader {
  /** The cursor of each topic's last read that reached its end here, by key. */
  private readonly tips = new Map<string, string>();

  constructor(private readonly o: CallbackReaderOptions) {}

  /**
   * Items after `after` (exclusive), waiting up to `waitMs` for the first one. A caller back with
   * the cursor of a read that reached the topic's end here has most likely nothing new yet: its
   * long-poll blocks at once (`XREAD BLOCK` answers at once when there are entries), one round
   * trip instead of a read that finds nothing and then the blocking one.
   */
  async read(topic: string, after: string, waitMs: number, limit: number): Promise<CallbacksReply> {
    const key = this.o.keys.callback(topic);
    const block = () =>
      this.o.pool.use((conn): Promise<XReadReply> =>
        conn.xread('COUNT', limit, 'BLOCK', waitMs, 'STREAMS', key, after),
      );
    const atTip = waitMs > 0 && this.tips.get(key) === after;
    let reply: XReadReply = atTip
      ? await block()
      : await this.o.redis.xread('COUNT', limit, 'STREAMS', key, after);
    if (!reply && waitMs > 0 && !atTip) reply = await block();
    const entries = reply?.[0]?.[1] ?? [];
    this.remember(key, entries.length < limit ? (entries.at(-1)?.[0] ?? after) : undefined);
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

  /** Notes the topic's end (`tip`), or forgets it (`undefined`: the read stopped at its limit). */
  private remember(key: string, tip: string | undefined): void {
    if (tip === undefined) {
      this.tips.delete(key);
      return;
    }
    if (this.tips.size >= MAX_TIPS && !this.tips.has(key)) this.tips.clear();
    this.tips.set(key, tip);
  }
}
