import type { RedisClient } from '@agent-reach/service-kit/redis';
import { TenantField, type ReachKeys, type WebhookSecretReply } from '@agent-reach/protocol';
import { newWebhookSecret } from './signing.ts';
import { webhookSecretScript } from './webhook-scripts.ts';

/** What the secrets work with. */
export interface WebhookSecretsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** How long a rotated-out secret signs too, ms (REACH_WEBHOOK_SECRET_GRACE_S). */
  graceMs: () => number;
  /** How long a tenant's secrets read are used before they are read again. @default 1000 */
  cacheMs?: number;
}

/**
 * Tenants' webhook secrets, kept on the tenant record (`webhook_secret`, and through a rotation's
 * grace `webhook_secret_previous` until `webhook_secret_previous_until`).
 */
export class WebhookSecrets {
  readonly #cache = new Map<string, { secrets: string[]; readAt: number }>();
  readonly #cacheMs: number;

  constructor(private readonly o: WebhookSecretsOptions) {
    this.#cacheMs = o.cacheMs ?? 1000;
  }

  /** Makes a new secret for `tenant`, shown this once; the previous one signs on through the grace. */
  async rotate(tenant: string): Promise<WebhookSecretReply> {
    const secret = newWebhookSecret();
    const until = await webhookSecretScript.run(this.o.redis, {
      keys: { tenant: this.o.keys.tenant(tenant), tenants: this.o.keys.tenants() },
      args: { tenantName: tenant, secret, graceMs: this.o.graceMs(), nowMs: Date.now() },
    });
    this.#cache.delete(tenant);
    return { tenant, secret, previous_valid_until: until };
  }

  /** The secrets `tenant`'s deliveries are signed with now: none, one, or two during a grace. */
  async signing(tenant: string): Promise<string[]> {
    const hit = this.#cache.get(tenant);
    if (hit && Date.now() - hit.readAt < this.#cacheMs) return hit.secrets;
    const [current, previous, until] = await this.o.redis.hmget(
      this.o.keys.tenant(tenant),
      TenantField.webhookSecret,
      TenantField.webhookSecretPrevious,
      TenantField.webhookSecretPreviousUntil,
    );
    const secrets: string[] = [];
    if (current) secrets.push(current);
    if (previous && Number(until) > Date.now()) secrets.push(previous);
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(tenant, { secrets, readAt: Date.now() });
    return secrets;
  }
}
