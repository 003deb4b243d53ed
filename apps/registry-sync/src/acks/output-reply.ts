import { refusalOf, ScriptReplyError, type Refused } from '../commands/index.ts';

/** Why output-3.lua changed nothing. */
export type OutputRefusal = 'unknown_task' | 'not_assigned' | 'duplicate';

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

/** Decodes output-3.lua's reply. */
export function asOutputReply(raw: unknown): OutputReply {
  const s = 'output-3.lua';
  if (!Array.isArray(raw) || typeof raw[0] !== 'number')
    throw new ScriptReplyError(s, raw, 'not a table with a code');
  const code = raw[0];
  if (code < 0)
    return {
      ok: false,
      refusal: refusalOf(s, code, ['unknown_task', 'not_assigned', 'duplicate'], raw),
    };
  const [, kept, truncated, first, topic, capability, attempt, receivedAt] = raw as [
    number,
    number,
    number,
    number,
    string,
    string,
    number,
    number,
  ];
  return {
    ok: true,
    kept: Number(kept),
    truncated: Number(truncated) === 1,
    first: Number(first) === 1,
    topic: String(topic ?? ''),
    capability: String(capability ?? ''),
    attempt: Number(attempt),
    receivedAt: Number(receivedAt),
  };
}
