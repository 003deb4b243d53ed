import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/** Pauses or resumes a schedule (schedule-state-2.lua); false when there is no such schedule. */
export const scheduleStateScript = defineScript({
  lua: new URL('./schedule-state-2.lua', import.meta.url),
  command: 'reachScheduleState',
  keys: ['schedule', 'nextTicks'],
  args: ['id', 'paused', 'next'],
  decode: (raw) => oneOf('schedule-state-2.lua', raw, [0, 1]) === 1,
});
