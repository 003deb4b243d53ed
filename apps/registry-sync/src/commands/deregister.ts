import { defineScript } from '@agent-reach/service-kit';
import { agentAuthRefusal, int, text, type AgentAuthRefusal } from './reply-slots.ts';

/** deregister-2.lua's reply. */
export type DeregisterReply =
  | {
      ok: true;
      epoch: number;
      pending: number;
      instanceId: string;
      /** The status before this call: `DRAINING` when it was draining already. */
      previous: string;
    }
  | AgentAuthRefusal;

/** Decodes deregister-2.lua's `{ epoch, pending count, instance_id, status before }` or its refusal. */
export function decodeDeregisterReply(raw: unknown): DeregisterReply {
  const s = 'deregister-2.lua';
  if (int(s, raw, 0) < 0) return agentAuthRefusal(s, raw);
  return {
    ok: true,
    epoch: int(s, raw, 0),
    pending: int(s, raw, 1),
    instanceId: text(s, raw, 2),
    previous: text(s, raw, 3),
  };
}

/**
 * Starts draining an agent: the agent with its token, or an operator (empty token fields; the
 * drain route checked the key).
 */
export const deregisterScript = defineScript({
  lua: new URL('./deregister-2.lua', import.meta.url),
  command: 'reachDeregister',
  keys: ['agent', 'pending'],
  args: ['tokenHash', 'tokenEpoch', 'holdMs'],
  decode: decodeDeregisterReply,
});
