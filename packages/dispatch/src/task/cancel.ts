import { defineScript } from '@agent-reach/service-kit';
import { refusalOf, ScriptReplyError, type Reply } from '@agent-reach/protocol';
import { count, int, slots, text } from '../reply-slots.ts';

/** What a cancelled task held when it was cancelled: what its follow-up clears. */
export interface CancelledTask {
  /** Cancelled by this call, not before (a repeated cancel, a resumed follow-up). */
  now: boolean;
  /** The status before the cancel. */
  before: string;
  agentId: string;
  attempt: number;
  epoch: number;
  topic: string;
  capability: string;
  messageId: string;
  stream: string;
  receivedAt: number;
  traceId: string;
  cancelledAt: number;
  cancelledBy: string;
}

/** cancel-3.lua: the cancelled task, or why nothing was cancelled. */
export type CancelReply = Reply<CancelledTask, 'unknown_task' | 'already_final' | 'not_cancelled'>;

const SCRIPT = 'cancel-3.lua';

/** Decodes `{ 0 | 1, status before, agent_id, … cancelled_by }`, or `{ -1 }`, `{ -7 }`, `{ -13 }`. */
export function decodeCancelReply(raw: unknown): CancelReply {
  const list = slots(SCRIPT, raw);
  const code = int(SCRIPT, raw, list, 0);
  if (code < 0)
    return {
      ok: false,
      refusal: refusalOf(SCRIPT, code, ['unknown_task', 'already_final', 'not_cancelled'], raw),
    };
  if (code > 1) throw new ScriptReplyError(SCRIPT, raw, `unknown code ${code}`);
  return {
    ok: true,
    now: code === 0,
    before: text(SCRIPT, raw, list, 1),
    agentId: text(SCRIPT, raw, list, 2),
    attempt: count(SCRIPT, raw, list, 3),
    epoch: count(SCRIPT, raw, list, 4),
    topic: text(SCRIPT, raw, list, 5),
    capability: text(SCRIPT, raw, list, 6),
    messageId: text(SCRIPT, raw, list, 7),
    stream: text(SCRIPT, raw, list, 8),
    receivedAt: count(SCRIPT, raw, list, 9),
    traceId: text(SCRIPT, raw, list, 10),
    cancelledAt: count(SCRIPT, raw, list, 11),
    cancelledBy: text(SCRIPT, raw, list, 12),
  };
}

/** Cancels a task, or (`mode: 'resume'`) answers for one cancelled already (canceller.ts). */
export const cancelScript = defineScript({
  lua: new URL('./cancel-3.lua', import.meta.url),
  command: 'reachCancel',
  keys: ['task', 'timeline', 'outbox'],
  args: ['now', 'by', 'retentionS', 'mode', 'archive'],
  decode: decodeCancelReply,
});
