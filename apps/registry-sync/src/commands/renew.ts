import { refusalOf, type Refused } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { asInt } from './reply-slots.ts';

/** renew-3.lua's reply. */
export type RenewReply = { ok: true; renewed: number } | Refused<'unknown_agent' | 'stale_epoch'>;

/** Decodes renew-3.lua's reply: how many leases it renewed, or its refusal. */
export function decodeRenewReply(raw: unknown): RenewReply {
  const s = 'renew-3.lua';
  const n = asInt(s, raw, raw, 'the reply');
  if (n >= 0) return { ok: true, renewed: n };
  return { ok: false, refusal: refusalOf(s, n, ['unknown_agent', 'stale_epoch'], raw) };
}

/** Renews the execution leases of the running tasks a `renew` ack names. */
export const renewScript = defineScript({
  lua: new URL('./renew-3.lua', import.meta.url),
  command: 'reachRenew',
  keys: ['agent', 'pending', 'leases'],
  args: ['epoch', 'at'],
  each: { name: 'taskIds', fields: ['taskId'] },
  decode: decodeRenewReply,
});
