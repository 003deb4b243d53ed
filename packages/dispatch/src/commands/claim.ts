import { defineScript, type Item } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';
import { count, int, slots } from '../reply-slots.ts';

/** claim-n.lua: the task_id claimed for this submission, or another submission's task. */
export type ClaimReply =
  { ours: true; created: boolean; createdAt: number; deadlineMs: number } | { ours: false };

const SCRIPT = 'claim-n.lua';

/**
 * What a submission's first script (claim-n.lua, hold-n.lua) reads first, in this order: the
 * submission's nonce and the task as it is stored.
 */
export const SUBMISSION_FIELDS = [
  'nonce',
  'taskId',
  'capability',
  'payload',
  'callbackTopic',
  'traceId',
  'timeoutMs',
] as const;

/** What a claim passes per submission, in the order claim-n.lua reads it. */
const CLAIM_FIELDS = [...SUBMISSION_FIELDS, 'agentId', 'epoch', 'route', 'now'] as const;

/** One submission of a claim call: its fields, and its constraints' fields and values. */
export type ClaimItem = Item<typeof CLAIM_FIELDS, 'constraints'>;

/**
 * claim-n.lua answers three slots per claim: a created task with 0 (its times are the ones the
 * claim passed, `now` and the deadline `timeoutMs` after it, so the script sends none back); 2
 * another submission's task; 1 this submission's, claimed before (a re-sent command), with its
 * created_at and deadline_ms.
 */
export function decodeClaimReplies(raw: unknown, sent: readonly ClaimItem[]): ClaimReply[] {
  const list = slots(SCRIPT, raw);
  if (list.length !== sent.length * 3)
    throw new ScriptReplyError(SCRIPT, raw, `${list.length} slots for ${sent.length} claims`);
  return sent.map((item, i) => {
    const code = int(SCRIPT, raw, list, i * 3);
    if (code === 2) return { ours: false };
    if (code === 0) {
      const now = Number(item.now);
      const timeoutMs = Number(item.timeoutMs);
      return {
        ours: true,
        created: true,
        createdAt: now,
        deadlineMs: timeoutMs > 0 ? now + timeoutMs : 0,
      };
    }
    if (code !== 1) throw new ScriptReplyError(SCRIPT, raw, `unknown state ${code}`);
    return {
      ours: true,
      created: false,
      createdAt: count(SCRIPT, raw, list, i * 3 + 1),
      deadlineMs: count(SCRIPT, raw, list, i * 3 + 2),
    };
  });
}

/**
 * Claims task_ids for submissions and assigns each to its chosen agent, with the idempotency
 * check: the claims of one task shard in one tick share a call (send/claim-batch.ts).
 */
export const claimScript = defineScript({
  lua: new URL('./claim-n.lua', import.meta.url),
  command: 'reachClaim',
  keys: ['index'],
  moreKeys: 'tasks',
  args: [],
  each: { name: 'claims', fields: CLAIM_FIELDS, list: 'constraints' },
  decode: (raw, _args, items = []) => decodeClaimReplies(raw, items),
});
