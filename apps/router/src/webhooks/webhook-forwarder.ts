import type { Logger } from 'pino';
import {
  decodeCallback,
  isFinalCallback,
  type CallbackMessage,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { CallbackPublisher } from '@agent-reach/dispatch';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { GroupReader, type GroupEntry } from '../callbacks/group-reader.ts';
import { TenantScope } from '../tasks/tenant-scope.ts';
import { webhookBodyParts } from './webhook-body.ts';
import { webhookEnqueueScript } from './webhook-scripts.ts';
import { WEBHOOK_GROUP, WEBHOOK_TOPIC } from './webhook-topic.ts';
import { TARGET_TTL_S } from './webhook-targets.ts';

/** What a forwarder works with. */
export interface WebhookForwarderOptions {
  /** Its own connection: the blocking group read holds it. */
  conn: RedisClient;
  /** The router's shared connection, where webhook-enqueue-6.lua and lock-1.lua are loaded. */
  redis: RedisClient;
  keys: ReachKeys;
  /** Publishes each item on the caller's own topic too (final ones once each). */
  callbacks: CallbackPublisher;
  logger: Logger;
  /** Told when deliveries were made, so this router's sender looks at once. */
  made?: () => void;
  /** How long an item may stay unacknowledged before another router claims it. @default 30000 */
  claimIdleMs?: number;
  /** How long one group read blocks. @default 5000 */
  blockMs?: number;
  /**
   * The forwarder's lease: a router that dies holding it is followed after this, and every
   * router tries to take it every third of it. @default 6000
   */
  leaseMs?: number;
  /** How long an idle topic is kept, seconds (REACH_CALLBACK_RETENTION_S). */
  retentionS: () => number;
}

/** Items read at once. */
const BATCH = 256;

/** Thrown when the forwarder's lease was lost while it handled items: they are taken over. */
class TurnLost extends Error {}

/**
 * Turns the items on {@link WEBHOOK_TOPIC} into webhook deliveries: every router runs one, a
 * consumer of one consumer group, and the one holding the forwarder's lease
 * (`keys.webhookForwarder()`) reads, so a task's items take their sequence numbers in the order
 * they were recorded. For each item it makes the delivery in Redis (webhook-enqueue-6.lua: once,
 * by the item's entry id, which becomes the delivery id and its `webhook-id`, and only while the
 * lease is this router's), publishes the item on the caller's own topic when the task has one (a
 * final result once, by the topic's marks), then acknowledges and deletes the entry. A router
 * that takes the lease (its holder died or stopped) first handles every item still pending, in
 * order. The sending itself is every router's (webhook-sender.ts), from Redis: nothing here is
 * held in memory.
 */
export class WebhookForwarder {
  readonly #key: string;
  readonly #reader: GroupReader;

  constructor(private readonly o: WebhookForwarderOptions) {
    this.#key = o.keys.callback(WEBHOOK_TOPIC);
    this.#reader = new GroupReader({
      conn: o.conn,
      redis: o.redis,
      key: this.#key,
      group: WEBHOOK_GROUP,
      logger: o.logger,
      what: 'webhook items',
      claimIdleMs: o.claimIdleMs ?? 30_000,
      blockMs: o.blockMs ?? 5000,
      retentionS: o.retentionS,
      room: () => BATCH,
      handle: (entries) => this.#handle(entries),
      turn: { key: o.keys.webhookForwarder(), leaseMs: o.leaseMs ?? 6000 },
    });
  }

  /** This router's consumer name: its mark in the forwarder's lease while it holds it. */
  get consumer(): string {
    return this.#reader.consumer;
  }

  /** Starts the read loop (once). */
  start(): void {
    this.#reader.start();
  }

  /** Ends the loop; items being handled stay pending, claimed by another router. */
  async close(): Promise<void> {
    await this.#reader.close();
  }

  /**
   * Makes the entries' deliveries (in entry order: one task's sequence numbers follow its items),
   * publishes them on the callers' topics, then acknowledges and deletes the entries. A failure
   * leaves them pending, handled again later: every step is once-only or harmless twice.
   */
  async #handle(entries: readonly GroupEntry[]): Promise<void> {
    const { redis, keys } = this.o;
    const items: { id: string; msg: CallbackMessage | undefined }[] = entries.map(([id, f]) => {
      if (!f) return { id, msg: undefined };
      try {
        return { id, msg: decodeCallback(f) };
      } catch {
        return { id, msg: undefined };
      }
    });
    // Every call is made before the first is sent: a throw leaves no call unwatched. Sent in
    // order on one connection, without waiting between them.
    const calls = items.map(({ id, msg }) => {
      if (!msg) return undefined;
      const taskId = msg.task_id;
      const tenant = TenantScope.tenantOf(taskId);
      const shown = new TenantScope(tenant, false).show(taskId);
      const delivery = `msg_${id}`;
      const { type, head, tail } = webhookBodyParts(msg, shown);
      const bar = taskId.lastIndexOf(':');
      const target = keys.webhookTarget(taskId);
      return {
        keys: {
          due: keys.webhookDue(),
          delivery: keys.webhook(delivery),
          target,
          scheduleTarget: bar > 0 ? keys.webhookTarget(taskId.slice(0, bar)) : target,
          seq: keys.webhookSeq(taskId),
          forwarder: keys.webhookForwarder(),
        },
        args: {
          id: delivery,
          tenant,
          taskId: shown,
          type,
          bodyHead: head,
          bodyTail: tail,
          seqTtlS: TARGET_TTL_S,
          owner: this.#reader.consumer,
        },
      };
    });
    const replies = await Promise.all(
      calls.map(async (call) => (call ? webhookEnqueueScript.run(redis, call) : undefined)),
    );
    if (replies.some((r) => r?.outcome === 'made')) this.o.made?.();
    // The lease is no longer this router's: its next holder takes these items over, in order.
    if (replies.some((r) => r?.outcome === 'not_holder'))
      throw new TurnLost('the webhook forwarder lease is no longer this router’s');
    const { callbacks } = this.o;
    await Promise.all(
      items.map(async ({ msg }, i) => {
        const topic = replies[i]?.topic;
        if (!msg || !topic) return;
        if (isFinalCallback(msg)) await callbacks.publish(topic, msg);
        else await callbacks.append(topic, [msg]);
      }),
    );
    const ids = entries.map(([id]) => id);
    await Promise.all([
      redis.xack(this.#key, WEBHOOK_GROUP, ...ids),
      redis.xdel(this.#key, ...ids),
    ]);
  }
}
