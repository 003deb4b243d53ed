import type { FinalCallbackMessage, SubmitReply } from '@agent-reach/protocol';
import { RawJson } from '../../callbacks/raw-json.ts';

/**
 * A waited submission's reply once its result arrived: the final status, with the result (as
 * its JSON text: send with `submitReplyJson`) or the error.
 */
export function withResult(reply: SubmitReply, msg: FinalCallbackMessage): SubmitReply {
  const out: SubmitReply = {
    ...reply,
    status: msg.status,
    agent_id: msg.agent_id || reply.agent_id,
  };
  if (msg.result !== undefined) out.result = new RawJson(msg.result);
  if (msg.error !== undefined) out.error = msg.error;
  return out;
}
