import { defineScript } from '@agent-reach/service-kit';
import { flag } from '../../commands/reply-slots.ts';

/** Decodes recover-1.lua's reply: whether the agent recovered now. */
export function decodeRecoverReply(raw: unknown): boolean {
  return flag('recover-1.lua', raw);
}

/** Brings a DEGRADED agent back to HEALTHY with a fresh health window. */
export const recoverScript = defineScript({
  lua: new URL('./recover-1.lua', import.meta.url),
  command: 'reachRecover',
  keys: ['agent'],
  args: [],
  decode: decodeRecoverReply,
});
