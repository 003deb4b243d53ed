import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/**
 * Moves a schedule on to its next tick once its due one fired (schedule-advance-2.lua); false
 * when it no longer waited for the tick read.
 */
export const scheduleAdvanceScript = defineScript({
  lua: new URL('./schedule-advance-2.lua', import.meta.url),
  command: 'reachScheduleAdvance',
  keys: ['schedule', 'nextTicks'],
  args: ['id', 'read', 'next', 'fired', 'taskId'],
  decode: (raw) => oneOf('schedule-advance-2.lua', raw, [0, 1]) === 1,
});
