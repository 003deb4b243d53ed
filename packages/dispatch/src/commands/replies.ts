import { streamIdMs } from '@agent-reach/protocol';

/**
 * The replies of this package's scripts, decoded in one place per script into named fields.
 * Failures are negative integers in the scripts' headers; `REPLY_CODES` is the one map of them.
 */

/** What a negative reply code of a dispatch script means. */
export const REPLY_CODES = {
  [-1]: 'not_found',
  [-2]: 'epoch_changed',
  [-3]: 'not_live',
  [-4]: 'full',
  [-8]: 'held_elsewhere',
  [-9]: 'not_dead',
} as const;

/** A refusal named by `REPLY_CODES`. */
export type ReplyRefusal = (typeof REPLY_CODES)[keyof typeof REPLY_CODES];

function refusal(code: number): ReplyRefusal {
  return REPLY_CODES[code as keyof typeof REPLY_CODES] ?? 'not_found';
}

/** claim-2.lua: the task_id claimed for this submission, or another submission's task. */
export type ClaimReply =
  { ours: true; created: boolean; createdAt: number; deadlineMs: number } | { ours: false };

/**
 * claim-2.lua answers a created task with 0 alone: its times are the ones the claim passed
 * (`now`, and the deadline `timeoutMs` after it), so the script builds no reply table for them.
 */
export function decodeClaimReply(
  raw: number | readonly unknown[],
  sent: { now: number; timeoutMs: number },
): ClaimReply {
  if (typeof raw === 'number') {
    if (raw === 2) return { ours: false };
    return {
      ours: true,
      created: raw === 0,
      createdAt: sent.now,
      deadlineMs: sent.timeoutMs > 0 ? sent.now + sent.timeoutMs : 0,
    };
  }
  const [state, createdAt, deadlineMs] = raw as [number, number?, number?];
  if (state === 2) return { ours: false };
  return {
    ours: true,
    created: state === 0,
    createdAt: createdAt ?? 0,
    deadlineMs: deadlineMs ?? 0,
  };
}

/** assign-2.lua: the attempt taken for the chosen agent, or why not. */
export type AssignReply =
  | { ok: true; attempt: number; createdAt: number; deadlineMs: number }
  | { ok: false; refusal: ReplyRefusal };

export function decodeAssignReply(raw: readonly unknown[]): AssignReply {
  const [code, attempt, createdAt, deadlineMs] = raw as [number, number?, number?, number?];
  if (code < 0) return { ok: false, refusal: refusal(code) };
  return {
    ok: true,
    attempt: attempt ?? 0,
    createdAt: createdAt ?? 0,
    deadlineMs: deadlineMs ?? 0,
  };
}

/** Why a chosen agent did not take a task. */
export type DeliveryRefusal = 'gone' | 'epoch_changed' | 'not_live' | 'full';

/** deliver-3.lua, per task: delivered (or delivered before, for a re-sent command), or refused. */
export type DeliverReply =
  | { ok: true; messageId: string; sentAt: number; inflight: number }
  | { ok: false; refusal: DeliveryRefusal };

/**
 * deliver-3.lua's reply to a call: Redis time, then three slots per task (code, entry id,
 * inflight count). A task's delivery time is its entry id's (a re-sent command's first delivery
 * keeps its own).
 */
export function decodeDeliverReplies(raw: readonly unknown[]): DeliverReply[] {
  const out: DeliverReply[] = [];
  for (let i = 1; i + 2 < raw.length; i += 3) {
    const code = raw[i] as number;
    const id = raw[i + 1];
    const messageId = typeof id === 'string' ? id : '';
    if (code >= 0) {
      out.push({
        ok: true,
        messageId,
        sentAt: streamIdMs(messageId),
        inflight: Number(raw[i + 2] ?? 0),
      });
      continue;
    }
    const why = refusal(code);
    out.push({ ok: false, refusal: why === 'not_found' ? 'gone' : (why as DeliveryRefusal) });
  }
  return out;
}

/** replay-2.lua: the dead task sent again as a new attempt, or why not. */
export type ReplayReply =
  { ok: true; attempt: number; capability: string } | { ok: false; refusal: ReplyRefusal };

export function decodeReplayReply(raw: readonly unknown[]): ReplayReply {
  const [code, attempt, capability] = raw as [number, number?, string?];
  if (code < 0) return { ok: false, refusal: refusal(code) };
  return { ok: true, attempt: attempt ?? 0, capability: capability ?? '' };
}
