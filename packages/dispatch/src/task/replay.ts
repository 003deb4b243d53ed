import { defineScript } from '@agent-reach/service-kit';
import { refusalOf, ScriptReplyError, type Reply } from '@agent-reach/protocol';
import { int, slots, text } from '../reply-slots.ts';

/** replay-2.lua: the dead task sent again as a new attempt, or why not. */
export type ReplayReply = Reply<
  { attempt: number; capability: string },
  'unknown_task' | 'not_dead'
>;

const SCRIPT = 'replay-2.lua';

/** Decodes `{ 0, new attempt, capability }`, or `{ -1 }` / `{ -9 }`. */
export function decodeReplayReply(raw: unknown): ReplayReply {
  const list = slots(SCRIPT, raw);
  const code = int(SCRIPT, raw, list, 0);
  if (code < 0)
    return { ok: false, refusal: refusalOf(SCRIPT, code, ['unknown_task', 'not_dead'], raw) };
  if (code !== 0) throw new ScriptReplyError(SCRIPT, raw, `unknown code ${code}`);
  return { ok: true, attempt: int(SCRIPT, raw, list, 1), capability: text(SCRIPT, raw, list, 2) };
}

/** Sends a dead-lettered task again as a fresh attempt with a fresh budget (the DLQ's replay). */
export const replayScript = defineScript({
  lua: new URL('./replay-2.lua', import.meta.url),
  command: 'reachReplay',
  keys: ['task', 'timeline'],
  args: [],
  decode: decodeReplayReply,
});
