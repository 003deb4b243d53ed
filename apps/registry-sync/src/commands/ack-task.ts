import { refusalOf, ScriptReplyError, type Reply } from '@agent-reach/protocol';
import { defineScript, type Item } from '@agent-reach/service-kit';
import { count, int, list, text } from './reply-slots.ts';

/** The task step of an ack (ack-task-n.lua). */
export type AckTaskReply = Reply<
  {
    capability: string;
    /** '' when the task has none. */
    callbackTopic: string;
    traceId: string;
    /** When the receipt was recorded; 0 before it. */
    receivedAt: number;
    /** The `sent` record's time; 0 when it has not landed yet. */
    sentAt: number;
    /** The task's current attempt. */
    attempt: number;
    /** The task is completed now (its result may be published). */
    final: boolean;
    /** A receipt the worker folded into this completion or failure was recorded here. */
    foldedRecorded: boolean;
  },
  'unknown_task' | 'not_assigned' | 'already_final' | 'not_eligible'
>;

const SCRIPT = 'ack-task-n.lua';
/** Slots per ack in the reply. */
const SLOTS = 9;

/** What an ack passes, in the order ack-task-n.lua reads it. */
const ACK_FIELDS = [
  'stage',
  'attempt',
  'agentId',
  'epoch',
  'at',
  'result',
  'error',
  'durationMs',
  'failureEntry',
  'foldedReceivedAt',
  'sentAt',
  'messageId',
  'placed',
  'region',
  'tags',
  'capabilities',
] as const;

/** One ack of a task-step call. */
export type AckTaskItem = Item<typeof ACK_FIELDS>;

/**
 * A pooled task that a pull agent reported before the router recorded it as sent: the ack is
 * applied again shortly (the ack consumer leaves it pending on a Redis error of this kind).
 */
function notRecordedYet(): Error {
  const err = new Error('TRYAGAIN pooled task not recorded as sent yet');
  // What Redis' own TRYAGAIN reply is named (service-kit `isRedisUnavailable`).
  err.name = 'ReplyError';
  return err;
}

/**
 * Decodes ack-task-n.lua's nine slots per ack: each ack's reply, its refusal, or an error for a
 * pooled task not recorded as sent yet (its call is made again).
 */
export function decodeAckTaskReplies(raw: unknown, acks: number): (AckTaskReply | Error)[] {
  const slots = list(SCRIPT, raw);
  if (slots.length !== acks * SLOTS)
    throw new ScriptReplyError(SCRIPT, raw, `${slots.length} slots for ${acks} acks`);
  const out: (AckTaskReply | Error)[] = [];
  for (let at = 0; at < slots.length; at += SLOTS) {
    const code = int(SCRIPT, raw, at);
    if (code === 1) {
      out.push(notRecordedYet());
      continue;
    }
    if (code < 0) {
      const allowed = ['unknown_task', 'not_assigned', 'already_final', 'not_eligible'] as const;
      out.push({ ok: false, refusal: refusalOf(SCRIPT, code, allowed, raw) });
      continue;
    }
    if (code !== 0) throw new ScriptReplyError(SCRIPT, raw, `unknown code ${code}`);
    out.push({
      ok: true,
      capability: text(SCRIPT, raw, at + 1),
      callbackTopic: text(SCRIPT, raw, at + 2),
      traceId: text(SCRIPT, raw, at + 3),
      receivedAt: count(SCRIPT, raw, at + 4),
      sentAt: count(SCRIPT, raw, at + 5),
      attempt: count(SCRIPT, raw, at + 6),
      final: count(SCRIPT, raw, at + 7) === 1,
      foldedRecorded: count(SCRIPT, raw, at + 8) === 1,
    });
  }
  return out;
}

/**
 * Applies acks to their tasks' state and timeline, each for its task's current assignment only:
 * the acks of one batch whose tasks share a task shard, in one call (acks/task-step.ts).
 */
export const ackTaskScript = defineScript({
  lua: new URL('./ack-task-n.lua', import.meta.url),
  command: 'reachAckTask',
  keys: ['outbox'],
  moreKeys: 'tasks',
  args: ['retentionS', 'archive'],
  each: { name: 'acks', fields: ACK_FIELDS },
  decode: (raw, _args, items = []) => decodeAckTaskReplies(raw, items.length),
});
