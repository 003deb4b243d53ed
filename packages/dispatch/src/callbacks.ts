import type { Redis } from 'ioredis';
import { encodeCallback, type CallbackMessage, type ReachKeys } from '@agent-reach/protocol';

/** Retention of callback topics. */
export interface CallbackSettings {
  /** How long an idle topic and its publish marks are kept, seconds. */
  callbackRetentionS: number;
  /** Approximate cap on entries per topic. */
  callbackMaxLen: number;
}

/**
 * Publishes final results on callback topics, once each: a completion once per task_id, a
 * dead-letter notice once per attempt (a replayed task may complete later).
 */
export class CallbackPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly settings: CallbackSettings,
  ) {}

  /** Publishes `msg` on `topic`; returns the entry id, or null when it was already published. */
  async publish(topic: string, msg: CallbackMessage): Promise<string | null> {
    const mark =
      msg.status === 'completed'
        ? this.keys.callbackSeen(topic, msg.task_id)
        : this.keys.callbackDeadSeen(topic, msg.task_id, msg.attempt);
    return this.redis.reachPublishCallback(
      this.keys.callback(topic),
      mark,
      this.settings.callbackRetentionS,
      this.settings.callbackMaxLen,
      this.settings.callbackRetentionS,
      ...encodeCallback(msg),
    );
  }
}
