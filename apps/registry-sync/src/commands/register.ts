import { refusalOf, type Refused } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { int, text } from './reply-slots.ts';

/** register-3.lua's reply. */
export type RegisterScriptReply =
  | {
      ok: true;
      epoch: number;
      nowMs: number;
      /** A new instance_id (or a new agent), not the same instance registering again. */
      newInstance: boolean;
      /** The instance's ack-signing key (kept when the same instance registers again). */
      ackKey: string;
      /** The instance this registration fenced off, or ''. */
      fenced: string;
    }
  | (Refused<'other_tenant'> & { owner: string });

/** Decodes register-3.lua's `{ epoch, now_ms, is_new_instance, ack key, fenced instance }` or its refusal. */
export function decodeRegisterReply(raw: unknown): RegisterScriptReply {
  const s = 'register-3.lua';
  if (int(s, raw, 0) < 0) {
    const refusal = refusalOf(s, int(s, raw, 0), ['other_tenant'], raw);
    return { ok: false, refusal, owner: text(s, raw, 1) };
  }
  return {
    ok: true,
    epoch: int(s, raw, 0),
    nowMs: int(s, raw, 1),
    newInstance: int(s, raw, 2) === 1,
    ackKey: text(s, raw, 3),
    fenced: text(s, raw, 4),
  };
}

/** Registers an agent instance (a new instance raises the epoch) in the key's tenant. */
export const registerScript = defineScript({
  lua: new URL('./register-3.lua', import.meta.url),
  command: 'reachRegister',
  keys: ['agent', 'inbox', 'pending'],
  args: [
    'agentId',
    'instanceId',
    'capabilities',
    'maxConcurrency',
    'region',
    'channel',
    'meta',
    'tokenHash',
    'group',
    'ready',
    'tags',
    'observe',
    'priority',
    'weight',
    'tenant',
    'shared',
    'ackKey',
    'inputSchemas',
    'relay',
  ],
  decode: decodeRegisterReply,
});
