import { Type, type Static } from '@sinclair/typebox';

/**
 * Webhook callbacks (docs/PROTOCOL.md, Webhook callbacks): a task submitted with `callback_url`
 * has its final result — and with `stream: true` its progress and chunks — POSTed there as JSON,
 * signed after Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with its
 * tenant's secret.
 */

/** The prefix of a webhook secret as the API shows it: `whsec_` and base64 of 32 random bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The headers of a webhook delivery (Standard Webhooks). */
export const WebhookHeader = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The `type` of a webhook body, by the callback item's status. */
export type WebhookEventType =
  | 'task.completed'
  | 'task.failed'
  | 'task.dead'
  | 'task.cancelled'
  | 'task.progress'
  | 'task.chunk'
  | 'task.truncated';

/** The body of a webhook delivery. */
export interface WebhookBody {
  type: WebhookEventType;
  /** When the item was recorded, ISO 8601. */
  timestamp: string;
  data: {
    task_id: string;
    status: string;
    capability: string;
    agent_id: string;
    attempt: number;
    /** Epoch ms of the item (a final result's completion). */
    completed_at: number;
    result?: unknown;
    error?: string;
    duration_ms?: number;
    progress?: unknown;
    chunk?: string;
    /** 1, 2, 3 … per task, in the order its items were recorded. */
    seq: number;
  };
}

/** A delivery's state: waiting for its next try, delivered, or given up. */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Fields of a delivery's hash (`keys.webhook(id)`). */
export const WebhookField = {
  url: 'url',
  tenant: 'tenant',
  taskId: 'task_id',
  type: 'type',
  body: 'body',
  status: 'status',
  tries: 'tries',
  createdAt: 'created_at',
  lastAt: 'last_at',
  lastStatus: 'last_status',
  lastError: 'last_error',
  nextAt: 'next_at',
} as const;

/** Fields of a webhook target's hash (`keys.webhookTarget(id)`): where a task's items go. */
export const WebhookTargetField = {
  url: 'url',
  /** The callback topic the caller gave (or a router's wait topic), '' for none. */
  topic: 'topic',
} as const;

/**
 * A retry schedule (REACH_WEBHOOK_RETRY_SCHEDULE): comma-separated waits before each try after
 * the first, each a whole number with a unit (`ms`, `s`, `m`, `h`; none is `ms`), e.g.
 * `5s,30s,2m`; milliseconds.
 * @throws an Error naming `setting` for anything else, or for an empty list
 */
export function delayListFrom(text: string, setting: string): number[] {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const out = items.map((item) => {
    const m = /^(\d{1,9})(ms|s|m|h)?$/.exec(item);
    if (!m)
      throw new Error(
        `settings: ${setting} holds ${JSON.stringify(item)}; give waits like 5s,30s,2m,1h (units ms, s, m, h)`,
      );
    return Number(m[1]) * (unit[m[2] ?? 'ms'] as number);
  });
  if (out.length === 0 || out.length > 100)
    throw new Error(`settings: ${setting} must list 1 to 100 waits, e.g. 5s,30s,2m,1h`);
  return out;
}

/** `GET /v1/webhooks/failures` query. */
export const WebhookFailuresQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description: 'next_cursor of the previous page: failures given up before it',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookFailuresQuery = Static<typeof WebhookFailuresQuery>;

/** A delivery that gave up, as the API shows it. */
export const WebhookFailureView = Type.Object({
  id: Type.String({ description: 'The delivery id: its `webhook-id` header on every try' }),
  task_id: Type.String(),
  type: Type.String({ description: 'task.completed, task.dead, task.progress, …' }),
  url: Type.String(),
  tries: Type.Integer(),
  created_at: Type.Integer({ description: 'Epoch ms the delivery was made' }),
  failed_at: Type.Integer({ description: 'Epoch ms it gave up' }),
  last_status: Type.Integer({ description: "The last try's HTTP status; 0 when none came" }),
  last_error: Type.String(),
});
export type WebhookFailureView = Static<typeof WebhookFailureView>;

/** `GET /v1/webhooks/failures` reply, newest failure first. */
export const WebhookFailuresReply = Type.Object({
  items: Type.Array(WebhookFailureView),
  next_cursor: Type.Optional(Type.String()),
});
export type WebhookFailuresReply = Static<typeof WebhookFailuresReply>;

/** `/v1/webhooks/failures/:id` params. */
export const WebhookDeliveryParams = Type.Object({
  id: Type.String({ pattern: '^msg_[0-9]{1,16}-[0-9]{1,16}$', description: 'Delivery id' }),
});
export type WebhookDeliveryParams = Static<typeof WebhookDeliveryParams>;

/** `POST /v1/webhooks/failures/:id/resend` reply. */
export const WebhookResendReply = Type.Object({
  id: Type.String(),
  status: Type.Literal('pending'),
});
export type WebhookResendReply = Static<typeof WebhookResendReply>;

/** `POST /v1/tenants/:tenant/webhook-secret` reply: the new secret, shown this once. */
export const WebhookSecretReply = Type.Object({
  tenant: Type.String(),
  secret: Type.String({ description: '`whsec_` and base64: the key receivers verify with' }),
  previous_valid_until: Type.Integer({
    description:
      'Epoch ms until which deliveries are signed with the previous secret too; 0 = none',
  }),
});
export type WebhookSecretReply = Static<typeof WebhookSecretReply>;
