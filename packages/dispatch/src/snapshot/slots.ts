import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** The slots an agent's deliveries take (slots-2.lua), as a delivery counts them. */
export const slotsScript = defineScript({
  lua: new URL('./slots-2.lua', import.meta.url),
  command: 'reachSlots',
  pipelined: true,
  keys: ['pending', 'inbox'],
  args: [],
  decode: (raw): number => {
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)
      throw new ScriptReplyError('slots-2.lua', raw, 'not a count');
    return raw;
  },
});
