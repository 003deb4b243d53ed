import { createHmac, timingSafeEqual } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX, WebhookHeader, type WebhookBody } from '@agent-reach/protocol';
import { ReachError } from '../errors.ts';

/** Why a webhook was not verified. */
export type WebhookVerificationProblem = 'missing_headers' | 'stale_timestamp' | 'bad_signature';

/** A webhook delivery whose Standard Webhooks signature does not verify: answer it 4xx, use nothing of it. */
export class WebhookVerificationError extends ReachError {
  override readonly name = 'WebhookVerificationError';
  readonly problem: WebhookVerificationProblem;
  constructor(problem: WebhookVerificationProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** True when `value` is a {@link WebhookVerificationError}. */
export function isWebhookVerificationError(value: unknown): value is WebhookVerificationError {
  return value instanceof WebhookVerificationError;
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Largest difference between `webhook-timestamp` and now, seconds (replays). @default 300 */
  toleranceS?: number;
  /** Now, epoch ms (tests). @default Date.now() */
  now?: number;
}

/** A header's value from a fetch `Headers`, a node `IncomingHttpHeaders` or a plain record. */
function header(
  headers: Headers | Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  if (typeof (headers as Headers).get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies a webhook Agent-Reach sent for a task with `callback_url` (Standard Webhooks:
 * `webhook-id`, `webhook-timestamp`, `webhook-signature`) and returns its body. `body` is the raw
 * request body, as received (not re-serialised JSON). `secret` is the tenant's `whsec_…` secret;
 * give both while a rotation's grace runs, either one verifies. Deliveries are at least once:
 * de-duplicate on `webhook-id`, and order a task's stream items by `data.seq`.
 * @throws WebhookVerificationError when a header is missing, the timestamp is off by more than
 *   `toleranceS`, or no signature matches
 */
export function verifyWebhook(
  secret: string | readonly string[],
  body: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  options: VerifyWebhookOptions = {},
): WebhookBody {
  const id = header(headers, WebhookHeader.id);
  const timestamp = header(headers, WebhookHeader.timestamp);
  const signature = header(headers, WebhookHeader.signature);
  if (!id || !timestamp || !signature)
    throw new WebhookVerificationError(
      'missing_headers',
      'webhook-id, webhook-timestamp and webhook-signature are all needed',
    );
  const at = Number(timestamp);
  const now = (options.now ?? Date.now()) / 1000;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now - at) > (options.toleranceS ?? 300))
    throw new WebhookVerificationError('stale_timestamp', 'webhook-timestamp is too far from now');
  const signed = `${id}.${timestamp}.${body}`;
  const given = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const key = Buffer.from(
      s.startsWith(WEBHOOK_SECRET_PREFIX) ? s.slice(WEBHOOK_SECRET_PREFIX.length) : s,
      'base64',
    );
    const expected = createHmac('sha256', key).update(signed).digest();
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected)))
      return JSON.parse(body) as WebhookBody;
  }
  throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the secret');
}
