import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  Coalescer,
  encodeCallback,
  type CallbackMessage,
  type ReachKeys,
} from '@agent-reach/protocol';
import { publishCallbackScript } from './commands/publish-callback.ts';

/** Retention of callback topics. */
export interface CallbackSettings {
  /** How long an idle topic and its publish marks are kept, seconds. */
  callbackRetentionS: number;
  /** Approximate cap on entries per topic. */
  callbackMaxLen: number;
}

/** A completion's mark lives in its topic's marks hash for the minute it completed in. */
const MARK_MINUTE_MS = 60_000;

/** What a {@link CallbackPublisher} writes with. */
export interface CallbackPublisherOptions {
  redis: RedisClient;
  keys: ReachKeys;
  settings: CallbackSettings;
}

/**
 * The one writer of callback-topic entries. Final results go on their topics once each: a
 * completion once per task_id, a dead-letter notice once per attempt (a replayed task may
 * complete later); the results of one tick for the same topic (and minute) go to Redis in one
 * script call. A running task's non-final items (progress, chunks, a truncation) are appended as
 * they are (`append`).
 */
export class CallbackPublisher {
  /** Keyed `<minute>|<topic>` (a topic never holds a `|`). */
  private readonly batches: Coalescer<CallbackMessage, string | null>;

  constructor(private readonly o: CallbackPublisherOptions) {
    this.batches = new Coalescer((key, msgs) => {
      const bar = key.indexOf('|');
      return this.publishAll(key.slice(bar + 1), Number(key.slice(0, bar)), msgs);
    });
  }

  /** Publishes `msg` on `topic`; returns the entry id, or null when it was already published. */
  publish(topic: string, msg: CallbackMessage): Promise<string | null> {
    // The same minute as the completion's `completed_at` in the task: a re-processed ack finds
    // its mark there.
    const minute = Math.floor(msg.completed_at / MARK_MINUTE_MS);
    return this.batches.call(
      `${minute}|${topic}`,
      msg,
      (msg.result?.length ?? 0) + (msg.error?.length ?? 0),
    );
  }

  /**
   * Appends a running task's non-final items to `topic`, without the once-only marks of final
   * results: the step that produced them refuses an ack applied again after a crash before it
   * gets here (output-3.lua).
   */
  async append(topic: string, msgs: readonly CallbackMessage[]): Promise<void> {
    const { callbackMaxLen, callbackRetentionS } = this.o.settings;
    const key = this.o.keys.callback(topic);
    // Every item is encoded before the first is written: a throw leaves no write unwatched.
    const entries = msgs.map((msg) => encodeCallback(msg));
    // One slot ({cb:<topic>}), sent without waiting between them: one round trip.
    await Promise.all([
      ...entries.map((fields) =>
        this.o.redis.xadd(key, 'MAXLEN', '~', callbackMaxLen, '*', ...fields),
      ),
      this.o.redis.expire(key, callbackRetentionS),
    ]);
  }

  private async publishAll(
    topic: string,
    minute: number,
    msgs: readonly CallbackMessage[],
  ): Promise<(string | null)[]> {
    const notices: string[] = [];
    const results: { mark: string; entry: (string | number)[] }[] = [];
    for (const msg of msgs) {
      let mark = msg.task_id;
      if (msg.status !== 'completed') {
        notices.push(this.o.keys.callbackDeadSeen(topic, msg.task_id, msg.attempt));
        // The notice's mark key: KEYS[i], counted after the topic and the marks hash.
        mark = `#${2 + notices.length}`;
      }
      results.push({ mark, entry: encodeCallback(msg) });
    }
    return publishCallbackScript.run(this.o.redis, {
      keys: { topic: this.o.keys.callback(topic), marks: this.o.keys.callbackMarks(topic, minute) },
      moreKeys: notices,
      args: {
        markTtlS: this.o.settings.callbackRetentionS,
        maxLen: this.o.settings.callbackMaxLen,
        topicTtlS: this.o.settings.callbackRetentionS,
      },
      items: results,
    });
  }
}
