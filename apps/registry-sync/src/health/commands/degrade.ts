import { defineScript } from '@agent-reach/service-kit';
import { flag } from '../../commands/reply-slots.ts';

/** Decodes degrade-1.lua's reply: whether the agent became DEGRADED now. */
export function decodeDegradeReply(raw: unknown): boolean {
  return flag('degrade-1.lua', raw);
}

/** Turns a HEALTHY agent DEGRADED until its cooldown ends. */
export const degradeScript = defineScript({
  lua: new URL('./degrade-1.lua', import.meta.url),
  command: 'reachDegrade',
  keys: ['agent'],
  args: ['until'],
  decode: decodeDegradeReply,
});
