import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** What webhook-enqueue-6.lua did with an item. */
export interface EnqueueReply {
  /** The callback topic the caller gave (or a router's wait topic), '' for none. */
  topic: string;
  /**
   * `made`: a delivery now; `before`: one made before (the item handled again); `none`: no
   * target; `not_holder`: nothing, the caller does not hold the forwarder's lease.
   */
  outcome: 'made' | 'before' | 'none' | 'not_holder';
}

const ENQUEUE_OUTCOMES = new Map<unknown, EnqueueReply['outcome']>([
  [1, 'made'],
  [0, 'before'],
  [-1, 'none'],
  [-2, 'not_holder'],
]);

/** Decodes webhook-enqueue-6.lua's `{ topic, 1 | 0 | -1 | -2 }`. */
export function decodeEnqueue(raw: unknown): EnqueueReply {
  if (Array.isArray(raw) && raw.length === 2 && typeof raw[0] === 'string') {
    const outcome = ENQUEUE_OUTCOMES.get(raw[1]);
    if (outcome !== undefined) return { topic: raw[0], outcome };
  }
  throw new ScriptReplyError('webhook-enqueue-6.lua', raw, 'not { topic, 1 | 0 | -1 | -2 }');
}

/** What webhook-take-1.lua took. */
export interface TakeReply {
  /** Redis' clock, epoch ms. */
  now: number;
  /** The earliest due score left in the set, epoch ms; -1 when it is empty. */
  next: number;
  /** The deliveries taken, each held under a lease. */
  ids: string[];
}

/** Decodes webhook-take-1.lua's `{ now, next, id, … }`. */
export function decodeTake(raw: unknown): TakeReply {
  if (Array.isArray(raw) && typeof raw[0] === 'number' && typeof raw[1] === 'number') {
    const ids = raw.slice(2);
    if (ids.every((id): id is string => typeof id === 'string'))
      return { now: raw[0], next: raw[1], ids };
  }
  throw new ScriptReplyError('webhook-take-1.lua', raw, 'not { now, next, id, … }');
}

/** Decodes a `1 | 0` reply of `script`. */
function decodeFlag(script: string) {
  return (raw: unknown): boolean => {
    if (raw !== 0 && raw !== 1) throw new ScriptReplyError(script, raw, 'not 0 or 1');
    return raw === 1;
  };
}

/** Makes an item's webhook delivery once (webhook-forwarder.ts). */
export const webhookEnqueueScript = defineScript({
  lua: new URL('./webhook-enqueue-6.lua', import.meta.url),
  command: 'reachWebhookEnqueue',
  keys: ['due', 'delivery', 'target', 'scheduleTarget', 'seq', 'forwarder'],
  args: ['id', 'tenant', 'taskId', 'type', 'bodyHead', 'bodyTail', 'seqTtlS', 'owner'],
  decode: decodeEnqueue,
});

/** Takes the due deliveries under a lease (webhook-sender.ts). */
export const webhookTakeScript = defineScript({
  lua: new URL('./webhook-take-1.lua', import.meta.url),
  command: 'reachWebhookTake',
  keys: ['due'],
  args: ['leaseMs', 'count'],
  decode: decodeTake,
});

/** Records a try's outcome, when the try still holds its delivery (webhook-sender.ts). */
export const webhookSettleScript = defineScript({
  lua: new URL('./webhook-settle-4.lua', import.meta.url),
  command: 'reachWebhookSettle',
  keys: ['due', 'delivery', 'failed', 'tenantFailed'],
  args: ['id', 'lease', 'outcome', 'delayMs', 'httpStatus', 'error', 'keepS', 'failedTtlS'],
  decode: decodeFlag('webhook-settle-4.lua'),
});

/** Makes a given-up delivery pending again (`POST /v1/webhooks/failures/:id/resend`). */
export const webhookResendScript = defineScript({
  lua: new URL('./webhook-resend-4.lua', import.meta.url),
  command: 'reachWebhookResend',
  keys: ['due', 'delivery', 'failed', 'tenantFailed'],
  args: ['id'],
  decode: decodeFlag('webhook-resend-4.lua'),
});

/** Gives a tenant a new webhook secret, the previous one signing on through a grace period. */
export const webhookSecretScript = defineScript({
  lua: new URL('./webhook-secret-2.lua', import.meta.url),
  command: 'reachWebhookSecret',
  keys: ['tenant', 'tenants'],
  args: ['tenantName', 'secret', 'graceMs', 'nowMs'],
  decode: (raw: unknown): number => {
    if (typeof raw !== 'number') throw new ScriptReplyError('webhook-secret-2.lua', raw, 'not ms');
    return raw;
  },
});

/** Every webhook script, for the router's loadScripts list. */
export const WEBHOOK_SCRIPTS = [
  webhookEnqueueScript,
  webhookTakeScript,
  webhookSettleScript,
  webhookResendScript,
  webhookSecretScript,
] as const;
