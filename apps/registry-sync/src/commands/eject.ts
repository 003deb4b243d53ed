import { defineScript } from '@agent-reach/service-kit';
import { flag } from './reply-slots.ts';

/** Decodes eject-1.lua's reply: whether the agent was ejected (false: it is gone). */
export function decodeEjectReply(raw: unknown): boolean {
  return flag('eject-1.lua', raw);
}

/** Ejects a slow agent until a given time (outlier detection). */
export const ejectScript = defineScript({
  lua: new URL('./eject-1.lua', import.meta.url),
  command: 'reachEject',
  keys: ['agent'],
  args: ['until'],
  decode: decodeEjectReply,
});
