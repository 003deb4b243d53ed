import type { AgentRuntime, ReachKeys } from '@agent-reach/protocol';
import type { AgentAuthRefusal } from '../commands/reply-slots.ts';
import type { ParsedToken } from './token.ts';

/** What one heartbeat reports, from the single route's body or one beat of a batch. */
export interface BeatReport {
  inflight: number;
  /** The single route's `status`: `busy` or `idle`. */
  status?: 'idle' | 'busy';
  ready?: boolean;
  /** false: the endpoint behind the agent does not answer its relay (SUSPECT at once). */
  reachable?: boolean;
  /** The agent's runtime figures (the single route's), kept with the record. */
  runtime?: AgentRuntime;
}

/** A tri-state flag as heartbeat-1.lua takes it: 1, 0, or "" to leave as is. */
const flag = (value: boolean | undefined): 1 | 0 | '' => (value === undefined ? '' : value ? 1 : 0);

/** heartbeat-1.lua's call for one agent's heartbeat: the single route's and each beat's. */
export function heartbeatCall(
  keys: ReachKeys,
  agentId: string,
  token: ParsedToken,
  report: BeatReport,
) {
  return {
    keys: { agent: keys.agent(agentId) },
    args: {
      tokenHash: token.secretHash,
      tokenEpoch: token.epoch,
      inflight: report.inflight,
      busy: report.status === 'busy' ? 1 : 0,
      ready: flag(report.ready),
      reachable: flag(report.reachable),
      runtime: report.runtime ? JSON.stringify(report.runtime) : '',
    },
  };
}

/** The error code and message of a token-checked script's refusal. */
export interface AgentRefusal {
  code: 'AGENT_NOT_FOUND' | 'STALE_EPOCH' | 'UNAUTHORIZED';
  message: string;
}

/** How the API words a refusal of heartbeat, serve or deregister. */
export function agentRefusal(agentId: string, res: AgentAuthRefusal): AgentRefusal {
  switch (res.refusal) {
    case 'unknown_agent':
      return {
        code: 'AGENT_NOT_FOUND',
        message: `agent ${agentId} is not registered; register again`,
      };
    case 'stale_epoch':
      return {
        code: 'STALE_EPOCH',
        message: `a newer instance of ${agentId} registered (epoch ${res.currentEpoch}); this instance is fenced off`,
      };
    case 'wrong_token':
      return {
        code: 'UNAUTHORIZED',
        message: 'token does not match this agent; use the token from the register reply',
      };
  }
}
