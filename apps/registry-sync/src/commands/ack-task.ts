import { refusalOf, type Reply } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { count, int, text } from './reply-slots.ts';

/** The task step of an ack (ack-task-2.lua). */
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

/** Decodes ack-task-2.lua's 9-slot reply or its refusal. */
export function decodeAckTaskReply(raw: unknown): AckTaskReply {
  const s = 'ack-task-2.lua';
  const code = int(s, raw, 0);
  if (code < 0) {
    const allowed = ['unknown_task', 'not_assigned', 'already_final', 'not_eligible'] as const;
    return { ok: false, refusal: refusalOf(s, code, allowed, raw) };
  }
  return {
    ok: true,
    capability: text(s, raw, 1),
    callbackTopic: text(s, raw, 2),
    traceId: text(s, raw, 3),
    receivedAt: count(s, raw, 4),
    sentAt: count(s, raw, 5),
    attempt: count(s, raw, 6),
    final: count(s, raw, 7) === 1,
    foldedRecorded: count(s, raw, 8) === 1,
  };
}

/** Applies an ack to the task's state and timeline, for the task's current assignment only. */
export const ackTaskScript = defineScript({
  lua: new URL('./ack-task-2.lua', import.meta.url),
  command: 'reachAckTask',
  keys: ['task', 'timeline'],
  args: [
    'stage',
    'attempt',
    'agentId',
    'epoch',
    'at',
    'result',
    'error',
    'durationMs',
    'retentionS',
    'failureEntry',
    'foldedReceivedAt',
    'sentAt',
    'messageId',
    'placed',
    'region',
    'tags',
    'capabilities',
  ],
  decode: decodeAckTaskReply,
});
