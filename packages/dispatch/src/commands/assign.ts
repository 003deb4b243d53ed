import { defineScript } from '@agent-reach/service-kit';
import { refusalOf, type Reply } from '@agent-reach/protocol';
import { count, int, slots } from '../reply-slots.ts';

/** assign-2.lua: the attempt taken for the chosen agent, or why not. */
export type AssignReply = Reply<
  { attempt: number; createdAt: number; deadlineMs: number },
  'unknown_task' | 'held_elsewhere'
>;

const SCRIPT = 'assign-2.lua';

/** Decodes `{ 0, attempt, since, deadline_ms }`, or `{ -1 }` / `{ -8 }`. */
export function decodeAssignReply(raw: unknown): AssignReply {
  const list = slots(SCRIPT, raw);
  const code = int(SCRIPT, raw, list, 0);
  if (code < 0)
    return { ok: false, refusal: refusalOf(SCRIPT, code, ['unknown_task', 'held_elsewhere'], raw) };
  return {
    ok: true,
    attempt: int(SCRIPT, raw, list, 1),
    createdAt: count(SCRIPT, raw, list, 2),
    deadlineMs: count(SCRIPT, raw, list, 3),
  };
}

/** Takes a waiting task (retry_wait, delayed) for the chosen agent, one sender per attempt. */
export const assignScript = defineScript({
  lua: new URL('./assign-2.lua', import.meta.url),
  command: 'reachAssign',
  keys: ['task', 'timeline'],
  args: ['nonce', 'attempt', 'agentId', 'epoch', 'graceMs', 'route'],
  decode: decodeAssignReply,
});
