import { defineScript, type Item } from '@agent-reach/service-kit';
import { refusalOf, ScriptReplyError, type Reply } from '@agent-reach/protocol';
import { count, int, slots } from '../reply-slots.ts';

/** assign-n.lua: the attempt taken for the chosen agent, or why not. */
export type AssignReply = Reply<
  { attempt: number; createdAt: number; deadlineMs: number },
  'unknown_task' | 'held_elsewhere'
>;

const SCRIPT = 'assign-n.lua';

/** One assignment's fields, in the order assign-n.lua reads them. */
export const ASSIGN_FIELDS = ['nonce', 'attempt', 'agentId', 'epoch', 'graceMs', 'route'] as const;

/** One assignment of a call. */
export type AssignItem = Item<typeof ASSIGN_FIELDS>;

/**
 * Decodes one assignment's four slots from `at`: `0, attempt, since, deadline_ms`, or `-1` /
 * `-8` and three zeros.
 */
export function decodeAssignReply(raw: unknown, at = 0): AssignReply {
  const list = slots(SCRIPT, raw);
  const code = int(SCRIPT, raw, list, at);
  if (code < 0)
    return { ok: false, refusal: refusalOf(SCRIPT, code, ['unknown_task', 'held_elsewhere'], raw) };
  return {
    ok: true,
    attempt: int(SCRIPT, raw, list, at + 1),
    createdAt: count(SCRIPT, raw, list, at + 2),
    deadlineMs: count(SCRIPT, raw, list, at + 3),
  };
}

/**
 * Takes waiting tasks (retry_wait, delayed, queued) of one task shard for their chosen agents,
 * one sender per attempt (send/assign-batch.ts): one reply per assignment.
 */
export const assignScript = defineScript({
  lua: new URL('./assign-n.lua', import.meta.url),
  command: 'reachAssign',
  keys: [],
  moreKeys: 'tasks',
  args: [],
  each: { name: 'assignments', fields: ASSIGN_FIELDS },
  decode: (raw, _args, items = []): AssignReply[] => {
    const list = slots(SCRIPT, raw);
    if (list.length !== items.length * 4)
      throw new ScriptReplyError(
        SCRIPT,
        raw,
        `${list.length} slots for ${items.length} assignments`,
      );
    return items.map((_, i) => decodeAssignReply(raw, i * 4));
  },
});
