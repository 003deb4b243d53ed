import type { CallbackMessage, SubmitReply } from '@agent-reach/protocol';
import { parseResult } from '../../callbacks/callback-reader.ts';

/** A waited submission's reply once its result arrived: the final status, with the result or the error. */
export function withResult(reply: SubmitReply, msg: CallbackMessage): SubmitReply {
  const out: SubmitReply = {
    ...reply,
    status: msg.status,
    agent_id: msg.agent_id || reply.agent_id,
  };
  if (msg.result !== undefined) out.result = parseResult(msg.result);
  if (msg.error !== undefined) out.error = msg.error;
  return out;
}
