import type { AgentStatus } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { agentAuthRefusal, int, str, text, type AgentAuthRefusal } from './reply-slots.ts';

/** heartbeat-1.lua's reply. */
export type HeartbeatReply =
  | {
      ok: true;
      epoch: number;
      status: AgentStatus;
      previous: AgentStatus;
      nowMs: number;
      instanceId: string;
    }
  | AgentAuthRefusal;

/** Decodes heartbeat-1.lua's `{ epoch, status, previous status, now_ms, instance_id }` or its refusal. */
export function decodeHeartbeatReply(raw: unknown): HeartbeatReply {
  const s = 'heartbeat-1.lua';
  if (int(s, raw, 0) < 0) return agentAuthRefusal(s, raw);
  return {
    ok: true,
    epoch: int(s, raw, 0),
    status: str(s, raw, 1) as AgentStatus,
    previous: text(s, raw, 2) as AgentStatus,
    nowMs: int(s, raw, 3),
    instanceId: text(s, raw, 4),
  };
}

/** Renews an agent's lease on Redis server time, checking its token. */
export const heartbeatScript = defineScript({
  lua: new URL('./heartbeat-1.lua', import.meta.url),
  command: 'reachHeartbeat',
  pipelined: true,
  keys: ['agent'],
  args: ['tokenHash', 'tokenEpoch', 'inflight', 'busy', 'ready', 'reachable', 'runtime'],
  decode: decodeHeartbeatReply,
});
