import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/**
 * Marks a claimed, not yet sent task as seen by another submission of its task_id
 * (mark-seen-1.lua); false when there is no such task (its claim was given back).
 */
export const markSeenScript = defineScript({
  lua: new URL('./mark-seen-1.lua', import.meta.url),
  command: 'reachMarkSeen',
  keys: ['task'],
  args: [],
  decode: (raw) => oneOf('mark-seen-1.lua', raw, [0, 1]) === 1,
});
