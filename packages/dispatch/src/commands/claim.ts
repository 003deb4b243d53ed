import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';
import { count, int, slots } from '../reply-slots.ts';

/** claim-2.lua: the task_id claimed for this submission, or another submission's task. */
export type ClaimReply =
  { ours: true; created: boolean; createdAt: number; deadlineMs: number } | { ours: false };

const SCRIPT = 'claim-2.lua';

/**
 * claim-2.lua answers a created task with 0 alone: its times are the ones the claim passed
 * (`now`, and the deadline `timeoutMs` after it), so the script builds no reply table for them.
 * 2 is another submission's task; `{ 1, created_at, deadline_ms }` this submission's, claimed
 * before (a re-sent command).
 */
export function decodeClaimReply(
  raw: unknown,
  sent: { readonly now: number | string; readonly timeoutMs: number | string },
): ClaimReply {
  if (raw === 2) return { ours: false };
  if (raw === 0) {
    const now = Number(sent.now);
    const timeoutMs = Number(sent.timeoutMs);
    return {
      ours: true,
      created: true,
      createdAt: now,
      deadlineMs: timeoutMs > 0 ? now + timeoutMs : 0,
    };
  }
  const list = slots(SCRIPT, raw);
  if (int(SCRIPT, raw, list, 0) !== 1) throw new ScriptReplyError(SCRIPT, raw, 'unknown state');
  return {
    ours: true,
    created: false,
    createdAt: count(SCRIPT, raw, list, 1),
    deadlineMs: count(SCRIPT, raw, list, 2),
  };
}

/**
 * Claims a task_id for a submission and assigns it to the chosen agent, with the idempotency
 * check (send/attempt-claims.ts `claimSubmission`).
 */
export const claimScript = defineScript({
  lua: new URL('./claim-2.lua', import.meta.url),
  command: 'reachClaim',
  keys: ['task', 'timeline'],
  args: [
    'nonce',
    'taskId',
    'capability',
    'payload',
    'callbackTopic',
    'traceId',
    'timeoutMs',
    'agentId',
    'epoch',
    'route',
    'now',
  ],
  each: { name: 'constraints', fields: ['field', 'value'] },
  decode: decodeClaimReply,
});
