import type { RedisClient } from '@agent-reach/service-kit/redis';
import { httpError, type OutboundHosts } from '@agent-reach/service-kit';
import { TenantField, WebhookTargetField, type ReachKeys } from '@agent-reach/protocol';
import { allowedCallbackUrl } from './callback-url.ts';
import { WEBHOOK_TOPIC } from './webhook-topic.ts';

/** How long a task's target is kept: longer than a task lives, its dead letter replayable. */
export const TARGET_TTL_S = 8 * 24 * 3600;

/** What the targets work with. */
export interface WebhookTargetsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Hosts a callback_url may name (REACH_WEBHOOK_HOSTS), and whether loopback ones too. */
  allowed: OutboundHosts;
  /** How long a tenant's having a secret is taken as read. @default 1000 */
  cacheMs?: number;
}

/**
 * Where webhook tasks' items go (`keys.webhookTarget`): written when a task (or a schedule) with
 * `callback_url` is submitted, before the task exists. The task's callback topic becomes
 * {@link WEBHOOK_TOPIC}, and the target keeps the URL and the caller's own topic, which the
 * webhook forwarder publishes each item on too. A task without `callback_url` never comes here.
 */
export class WebhookTargets {
  /** Where webhooks may go: checked at submission, and again before each try. */
  readonly allowed: OutboundHosts;
  readonly #secretSeen = new Map<string, number>();
  readonly #cacheMs: number;

  constructor(private readonly o: WebhookTargetsOptions) {
    this.allowed = o.allowed;
    this.#cacheMs = o.cacheMs ?? 1000;
  }

  /**
   * Checks `url` and that `tenant` has a webhook secret, writes the target of `id` (a task, or a
   * schedule whose ticks' tasks are `<id>:<tick>`, kept until the schedule is deleted), and
   * returns the callback topic the task takes.
   * @throws CALLBACK_URL_NOT_ALLOWED (403); WEBHOOK_SECRET_MISSING (409)
   */
  async register(
    id: string,
    url: string,
    topic: string | undefined,
    tenant: string,
    of: 'task' | 'schedule' = 'task',
  ): Promise<string> {
    const checked = allowedCallbackUrl(url, this.allowed);
    await this.#needSecret(tenant);
    const key = this.o.keys.webhookTarget(id);
    const fields = {
      [WebhookTargetField.url]: checked.href,
      [WebhookTargetField.topic]: topic ?? '',
    };
    // One slot, both sent without waiting between them: one round trip.
    await Promise.all([
      this.o.redis.hset(key, fields),
      of === 'schedule' ? this.o.redis.persist(key) : this.o.redis.expire(key, TARGET_TTL_S),
    ]);
    return WEBHOOK_TOPIC;
  }

  /** Drops a schedule's target (the schedule is deleted). */
  async forget(id: string): Promise<void> {
    await this.o.redis.del(this.o.keys.webhookTarget(id));
  }

  async #needSecret(tenant: string): Promise<void> {
    const seen = this.#secretSeen.get(tenant);
    if (seen !== undefined && Date.now() - seen < this.#cacheMs) return;
    const has = await this.o.redis.hexists(this.o.keys.tenant(tenant), TenantField.webhookSecret);
    if (!has)
      throw httpError(
        'WEBHOOK_SECRET_MISSING',
        `tenant ${tenant} has no webhook secret to sign with: an operator makes one with POST /v1/tenants/${tenant}/webhook-secret`,
      );
    if (this.#secretSeen.size > 10_000) this.#secretSeen.clear();
    this.#secretSeen.set(tenant, Date.now());
  }
}
