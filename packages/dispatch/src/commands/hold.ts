import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/** What holding did: created, ours already (a re-sent command), or an earlier submission's. */
export type HoldReply = 'created' | 'ours' | 'exists';

const REPLIES = { 0: 'created', 1: 'ours', 2: 'exists' } as const;

/** Stores a submission that waits for its time (`delayed`) or for a slot (`queued`): send/hold.ts. */
export const holdScript = defineScript({
  lua: new URL('./hold-3.lua', import.meta.url),
  command: 'reachHold',
  keys: ['task', 'timeline', 'index'],
  args: [
    'nonce',
    'taskId',
    'capability',
    'payload',
    'callbackTopic',
    'traceId',
    'timeoutMs',
    'runAt',
    'now',
    'status',
  ],
  each: { name: 'constraints', fields: ['field', 'value'] },
  decode: (raw): HoldReply => REPLIES[oneOf('hold-3.lua', raw, [0, 1, 2])],
});
