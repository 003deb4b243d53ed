import { defineScript, type Item } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';
import { int, slots } from '../reply-slots.ts';
import { SUBMISSION_FIELDS } from './claim.ts';

/** What holding did: created, ours already (a re-sent command), or an earlier submission's. */
export type HoldReply = 'created' | 'ours' | 'exists';

const SCRIPT = 'hold-n.lua';
const REPLIES = ['created', 'ours', 'exists'] as const;

/** What a hold passes per task, in the order hold-n.lua reads it. */
const HOLD_FIELDS = [...SUBMISSION_FIELDS, 'runAt', 'now', 'status'] as const;

/** One task of a hold call: its fields, and its constraints' fields and values. */
export type HoldItem = Item<typeof HOLD_FIELDS, 'constraints'>;

/**
 * Stores submissions that wait for their time (`delayed`) or for a slot (`queued`), the holds of
 * one task shard in one tick in one call (send/hold-batch.ts): one reply per task.
 */
export const holdScript = defineScript({
  lua: new URL('./hold-n.lua', import.meta.url),
  command: 'reachHold',
  keys: ['index'],
  moreKeys: 'tasks',
  args: [],
  each: { name: 'holds', fields: HOLD_FIELDS, list: 'constraints' },
  decode: (raw, _args, items = []): HoldReply[] => {
    const list = slots(SCRIPT, raw);
    if (list.length !== items.length)
      throw new ScriptReplyError(SCRIPT, raw, `${list.length} replies for ${items.length} holds`);
    return list.map((_, i) => {
      const code = int(SCRIPT, raw, list, i);
      const reply = REPLIES[code];
      if (reply === undefined) throw new ScriptReplyError(SCRIPT, raw, `unknown state ${code}`);
      return reply;
    });
  },
});
