import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/**
 * Records a submission that is dead on arrival (reject-3.lua, dead-letterer.ts); false when the
 * task_id exists already (nothing written).
 */
export const rejectScript = defineScript({
  lua: new URL('./reject-3.lua', import.meta.url),
  command: 'reachReject',
  keys: ['task', 'timeline', 'outbox'],
  args: [
    'taskId',
    'capability',
    'payload',
    'callbackTopic',
    'traceId',
    'reason',
    'retentionS',
    'archive',
  ],
  each: { name: 'constraints', fields: ['field', 'value'] },
  decode: (raw) => oneOf('reject-3.lua', raw, [0, 1]) === 1,
});
