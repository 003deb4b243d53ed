import type { RedisClient } from '@agent-reach/service-kit/redis';
import { httpError } from '@agent-reach/service-kit';
import {
  WebhookField,
  type ReachKeys,
  type WebhookFailuresReply,
  type WebhookFailureView,
} from '@agent-reach/protocol';
import type { TenantScope } from '../tasks/tenant-scope.ts';
import { webhookResendScript } from './webhook-scripts.ts';

/** What the failures work with. */
export interface WebhookFailuresOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Told of each delivery made pending again (this router's sender looks at once). */
  resent?: () => void;
}

const VIEW_FIELDS = [
  WebhookField.tenant,
  WebhookField.taskId,
  WebhookField.type,
  WebhookField.url,
  WebhookField.tries,
  WebhookField.createdAt,
  WebhookField.lastAt,
  WebhookField.lastStatus,
  WebhookField.lastError,
  WebhookField.status,
] as const;

/**
 * Webhook deliveries that gave up (`GET /v1/webhooks/failures`, `POST …/:id/resend`): a tenant
 * sees its own (`keys.webhookFailed(tenant)`), operators every tenant's (`keys.webhookFailed()`).
 */
export class WebhookFailures {
  constructor(private readonly o: WebhookFailuresOptions) {}

  /** Newest first, `limit` at most, before `cursor` (a failure time, ms) when given. */
  async list(scope: TenantScope, limit: number, cursor?: string): Promise<WebhookFailuresReply> {
    const { redis, keys } = this.o;
    const set = scope.all ? keys.webhookFailed() : keys.webhookFailed(scope.tenant);
    const max = cursor === undefined ? '+inf' : `(${cursor}`;
    const flat = await redis.zrevrangebyscore(set, max, '-inf', 'WITHSCORES', 'LIMIT', 0, limit);
    const found: { id: string; at: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      found.push({ id: flat[i] as string, at: Number(flat[i + 1]) });
    // One slot ({wh}): one round trip for them all, on a Cluster too.
    const hashKeys = found.map(({ id }) => keys.webhook(id));
    const hashes = await Promise.all(hashKeys.map((key) => redis.hmget(key, ...VIEW_FIELDS)));
    const items: WebhookFailureView[] = [];
    found.forEach(({ id, at }, i) => {
      const [tenant, taskId, type, url, tries, createdAt, , lastStatus, lastError, status] =
        hashes[i] ?? [];
      // Expired, re-sent meanwhile, or (a hand-edited set) another tenant's: not listed.
      if (!tenant || status !== 'failed' || !(scope.all || tenant === scope.tenant)) return;
      items.push({
        id,
        task_id:
          scope.all && tenant !== scope.tenant ? `${tenant}/${taskId ?? ''}` : (taskId ?? ''),
        type: type ?? '',
        url: url ?? '',
        tries: Number(tries) || 0,
        created_at: Number(createdAt) || 0,
        failed_at: at,
        last_status: Number(lastStatus) || 0,
        last_error: lastError ?? '',
      });
    });
    const last = found[found.length - 1];
    return {
      items,
      ...(found.length === limit && last ? { next_cursor: String(last.at) } : {}),
    };
  }

  /**
   * Makes a given-up delivery pending again, its `webhook-id` and body the same.
   * @throws WEBHOOK_NOT_FOUND (404) for one unknown, not given up, or another tenant's
   */
  async resend(scope: TenantScope, id: string): Promise<void> {
    const { redis, keys } = this.o;
    const tenant = await redis.hget(keys.webhook(id), WebhookField.tenant);
    const missing = () =>
      httpError(
        'WEBHOOK_NOT_FOUND',
        `no given-up webhook delivery ${id}: see GET /v1/webhooks/failures`,
      );
    if (!tenant || !(scope.all || tenant === scope.tenant)) throw missing();
    const done = await webhookResendScript.run(redis, {
      keys: {
        due: keys.webhookDue(),
        delivery: keys.webhook(id),
        failed: keys.webhookFailed(),
        tenantFailed: keys.webhookFailed(tenant),
      },
      args: { id },
    });
    if (!done) throw missing();
    this.o.resent?.();
  }
}
