import { defineScript } from '@agent-reach/service-kit';
import { asInt } from './reply-slots.ts';

/** Decodes slow-1.lua's reply: the agent's slow streak after this completion (0 when gone). */
export function decodeSlowReply(raw: unknown): number {
  return asInt('slow-1.lua', raw, raw, 'the reply');
}

/** Records an agent's execution time for a capability (EWMA and slow streak). */
export const slowScript = defineScript({
  lua: new URL('./slow-1.lua', import.meta.url),
  command: 'reachSlow',
  keys: ['agent'],
  args: ['durationMs', 'slowMs', 'capability', 'ewmaWeight'],
  decode: decodeSlowReply,
});
