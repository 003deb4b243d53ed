import { defineScript } from '@agent-reach/service-kit';
import { flag } from './reply-slots.ts';

/** Decodes suspect-1.lua's reply: whether the agent became SUSPECT now. */
export function decodeSuspectReply(raw: unknown): boolean {
  return flag('suspect-1.lua', raw);
}

/** Marks a HEALTHY agent whose task loop stopped consuming SUSPECT. */
export const suspectScript = defineScript({
  lua: new URL('./suspect-1.lua', import.meta.url),
  command: 'reachSuspect',
  keys: ['agent'],
  args: [],
  decode: decodeSuspectReply,
});
