import type { Redis } from 'ioredis';
import {
  Coalescer,
  encodeCallback,
  type CallbackMessage,
  type ReachKeys,
} from '@agent-reach/protocol';

/** Retention of callback topics. */
export interface CallbackSettings {
  /** How long an idle topic and its publish marks are kept, seconds. */
  callbackRetentionS: number;
  /** Approximate cap on entries per topic. */
  callbackMaxLen: number;
}

/**
 * Publishes final results on callback topics, once each: a completion once per task_id, a
 * dead-letter notice once per attempt (a replayed task may complete later). The results of one
 * tick for the same topic go to Redis in one script call.
 */
export class CallbackPublisher {
  private readonly batches: Coalescer<CallbackMessage, string | null>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly settings: CallbackSettings,
  ) {
    this.batches = new Coalescer((topic, msgs) => this.publishAll(topic, msgs));
  }

  /** Publishes `msg` on `topic`; returns the entry id, or null when it was already published. */
  publish(topic: string, msg: CallbackMessage): Promise<string | null> {
    return this.batches.call(topic, msg, (msg.result?.length ?? 0) + (msg.error?.length ?? 0));
  }

  private async publishAll(
    topic: string,
    msgs: readonly CallbackMessage[],
  ): Promise<(string | null)[]> {
    const marks: string[] = [];
    const entries: (string | number)[] = [];
    for (const msg of msgs) {
      marks.push(
        msg.status === 'completed'
          ? this.keys.callbackSeen(topic, msg.task_id)
          : this.keys.callbackDeadSeen(topic, msg.task_id, msg.attempt),
      );
      const fields = encodeCallback(msg);
      entries.push(fields.length, ...fields);
    }
    const ids = await this.redis.reachPublishCallback(
      1 + marks.length,
      this.keys.callback(topic),
      ...marks,
      this.settings.callbackRetentionS,
      this.settings.callbackMaxLen,
      this.settings.callbackRetentionS,
      ...entries,
    );
    return ids.map((id) => (typeof id === 'string' ? id : null));
  }
}
