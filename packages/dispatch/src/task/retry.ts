import { defineScript } from '@agent-reach/service-kit';
import { refusalOf, ScriptReplyError } from '@agent-reach/protocol';
import { count, int, slots, text } from '../reply-slots.ts';

/** retry-3.lua: another attempt after a backoff, the dead-letter state, or nothing changed. */
export type RetryReply =
  | { kind: 'retry'; attempt: number; capability: string; dueAt: number; traceId: string }
  | {
      kind: 'dead';
      attempt: number;
      capability: string;
      callbackTopic: string;
      reason: string;
      traceId: string;
    }
  /** No such task, the attempt moved on, or the task is final already. */
  | { kind: 'skipped'; refusal: 'unknown_task' | 'not_assigned' | 'already_final' };

const SCRIPT = 'retry-3.lua';

/**
 * Decodes `{ 1, next attempt, capability, callback_topic, due_at, trace_id }` (a retry),
 * `{ 2, attempt, capability, callback_topic, reason, trace_id }` (dead), or `{ -1 }`, `{ -6 }`,
 * `{ -7 }`.
 */
export function decodeRetryReply(raw: unknown): RetryReply {
  const list = slots(SCRIPT, raw);
  const code = int(SCRIPT, raw, list, 0);
  if (code < 0)
    return {
      kind: 'skipped',
      refusal: refusalOf(SCRIPT, code, ['unknown_task', 'not_assigned', 'already_final'], raw),
    };
  const attempt = int(SCRIPT, raw, list, 1);
  const capability = text(SCRIPT, raw, list, 2);
  const traceId = text(SCRIPT, raw, list, 5);
  if (code === 1)
    return { kind: 'retry', attempt, capability, dueAt: count(SCRIPT, raw, list, 4), traceId };
  if (code === 2)
    return {
      kind: 'dead',
      attempt,
      capability,
      callbackTopic: text(SCRIPT, raw, list, 3),
      reason: text(SCRIPT, raw, list, 4),
      traceId,
    };
  throw new ScriptReplyError(SCRIPT, raw, `unknown code ${code}`);
}

/**
 * Decides what happens to a task attempt that will not complete: another attempt after a
 * backoff, or the dead-letter state (registry-sync's TaskOutcomes).
 */
export const retryScript = defineScript({
  lua: new URL('./retry-3.lua', import.meta.url),
  command: 'reachRetry',
  keys: ['task', 'timeline', 'outbox'],
  args: [
    'attempt',
    'reason',
    'maxAttempts',
    'dueAt',
    'terminal',
    'retentionS',
    'error',
    'agentId',
    'sentAt',
    'messageId',
    'archive',
  ],
  decode: decodeRetryReply,
});
