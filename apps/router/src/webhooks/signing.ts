import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_SECRET_PREFIX, WebhookHeader } from '@agent-reach/protocol';

/** A new webhook secret: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one try: `webhook-id` (the same on every try of a delivery),
 * `webhook-timestamp` (seconds, this try's) and `webhook-signature`, one `v1,<base64>` per secret,
 * space-separated (during a rotation's grace, the new secret's and the previous one's).
 */
export function signatureHeaders(
  id: string,
  timestampS: number,
  body: string,
  secrets: readonly string[],
): Record<string, string> {
  const at = new Date(timestampS * 1000);
  return {
    [WebhookHeader.id]: id,
    [WebhookHeader.timestamp]: String(timestampS),
    [WebhookHeader.signature]: secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}
