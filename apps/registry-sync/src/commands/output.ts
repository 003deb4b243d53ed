import { refusalOf, type Refused } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { count, int, text } from './reply-slots.ts';

/** Why output-3.lua changed nothing. */
export type OutputRefusal = 'unknown_task' | 'not_assigned' | 'already_final';

/** output-3.lua's reply, decoded. */
export type OutputReply =
  | {
      ok: true;
      /** Values or chunks kept (the first `kept` of the ack's). */
      kept: number;
      /** This ack reached the task's bound. */
      truncated: boolean;
      /** The task's first output. */
      first: boolean;
      /** The task's callback topic when it was submitted with `stream: true`, else ''. */
      topic: string;
      capability: string;
      attempt: number;
      /** When the attempt's receipt was recorded (0: not yet). */
      receivedAt: number;
    }
  | Refused<OutputRefusal>;

/**
 * Decodes output-3.lua's `{ 0, kept, truncated, first, topic, capability, attempt, received_at }`
 * or its refusal.
 */
export function decodeOutputReply(raw: unknown): OutputReply {
  const s = 'output-3.lua';
  const code = int(s, raw, 0);
  if (code < 0)
    return {
      ok: false,
      refusal: refusalOf(s, code, ['unknown_task', 'not_assigned', 'already_final'], raw),
    };
  return {
    ok: true,
    kept: int(s, raw, 1),
    truncated: int(s, raw, 2) === 1,
    first: int(s, raw, 3) === 1,
    topic: text(s, raw, 4),
    capability: text(s, raw, 5),
    attempt: count(s, raw, 6),
    receivedAt: count(s, raw, 7),
  };
}

/** Keeps a running task's progress values or output chunks in its events stream. */
export const outputScript = defineScript({
  lua: new URL('./output-3.lua', import.meta.url),
  command: 'reachOutput',
  keys: ['task', 'timeline', 'events'],
  args: [
    'stage',
    'attempt',
    'agentId',
    'epoch',
    'at',
    'maxEntries',
    'maxBytes',
    'retentionS',
    'ackEntryId',
  ],
  each: { name: 'outputs', fields: ['data'] },
  decode: decodeOutputReply,
});
