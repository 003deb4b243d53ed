import { defineScript, type Item } from '@agent-reach/service-kit';
import { refusalOf, streamIdMs, type Reply } from '@agent-reach/protocol';
import { count, int, slots, text } from '../reply-slots.ts';

/** Why a chosen agent did not take a task. */
export type DeliveryRefusal = 'unknown_agent' | 'stale_epoch' | 'not_live' | 'full';

const REFUSALS: readonly DeliveryRefusal[] = ['unknown_agent', 'stale_epoch', 'not_live', 'full'];

/** deliver-3.lua, per task: delivered (or delivered before, for a re-sent command), or refused. */
export type DeliverReply = Reply<
  { messageId: string; sentAt: number; inflight: number },
  DeliveryRefusal
>;

const SCRIPT = 'deliver-3.lua';

/**
 * deliver-3.lua's reply to a call: Redis time, then three slots per task (code, entry id,
 * inflight count). A task's delivery time is its entry id's (a re-sent command's first delivery
 * keeps its own).
 */
export function decodeDeliverReplies(raw: unknown): DeliverReply[] {
  const list = slots(SCRIPT, raw);
  const out: DeliverReply[] = [];
  for (let i = 1; i + 2 < list.length; i += 3) {
    const code = int(SCRIPT, raw, list, i);
    if (code < 0) {
      out.push({ ok: false, refusal: refusalOf(SCRIPT, code, REFUSALS, raw) });
      continue;
    }
    const messageId = text(SCRIPT, raw, list, i + 1);
    out.push({
      ok: true,
      messageId,
      sentAt: streamIdMs(messageId),
      inflight: count(SCRIPT, raw, list, i + 2),
    });
  }
  return out;
}

const TASK_FIELDS = ['epoch', 'taskId', 'attempt', 'deadlineMs', 'mark'] as const;

/** One task of a delivery call: its fields, and its stream entry's fields and values. */
export type DeliverTask = Item<typeof TASK_FIELDS, 'entry'>;

/**
 * Re-verifies the chosen agent and delivers a tick's tasks for it to its inbox in one step
 * (delivery.ts `Delivery`).
 */
export const deliverScript = defineScript({
  lua: new URL('./deliver-3.lua', import.meta.url),
  command: 'reachDeliver',
  keys: ['agent', 'inbox', 'pending'],
  args: ['leaseBoundMs'],
  each: { name: 'tasks', fields: TASK_FIELDS, list: 'entry' },
  decode: decodeDeliverReplies,
});
