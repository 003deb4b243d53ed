import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/** Gives an assignment back when no candidate took the task; true when it was the caller's. */
export const unassignScript = defineScript({
  lua: new URL('./unassign-1.lua', import.meta.url),
  command: 'reachUnassign',
  keys: ['task'],
  args: ['nonce', 'status'],
  decode: (raw) => oneOf('unassign-1.lua', raw, [0, 1]) === 1,
});
