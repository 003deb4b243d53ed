import type { AgentStatus } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';
import { int, str } from './reply-slots.ts';

/** lease-4.lua's reply. */
export interface LeaseReply {
  /** `NONE` when the agent has no record. */
  previous: AgentStatus | 'NONE';
  /** `GONE` when a drained agent was removed; `NONE` when it had no record. */
  status: AgentStatus | 'GONE' | 'NONE';
  leaseAgeMs: number;
  pending: number;
  /** This sweep started a flap-damping hold: the agent stays SUSPECT until it ends. */
  damped: boolean;
}

/** Decodes lease-4.lua's `{ previous status, new status, lease age ms, pending count, damped }`. */
export function decodeLeaseReply(raw: unknown): LeaseReply {
  const s = 'lease-4.lua';
  return {
    previous: str(s, raw, 0) as LeaseReply['previous'],
    status: str(s, raw, 1) as LeaseReply['status'],
    leaseAgeMs: int(s, raw, 2),
    pending: int(s, raw, 3),
    damped: int(s, raw, 4) === 1,
  };
}

/** Sets an agent's status from its lease's age on Redis time; removes a drained agent. */
export const leaseScript = defineScript({
  lua: new URL('./lease-4.lua', import.meta.url),
  command: 'reachLease',
  pipelined: true,
  keys: ['agent', 'pending', 'inbox', 'card'],
  args: ['suspectMs', 'offlineMs', 'graceMs', 'flapLimit', 'flapWindowMs', 'flapHoldMs'],
  decode: decodeLeaseReply,
});
