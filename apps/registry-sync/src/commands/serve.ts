import { defineScript } from '@agent-reach/service-kit';
import { agentAuthRefusal, int, type AgentAuthRefusal } from './reply-slots.ts';

/** serve-1.lua's reply. */
export type ServeReply = { ok: true; epoch: number } | AgentAuthRefusal;

/** Decodes serve-1.lua's `{ epoch }` or its refusal (the agent's token is checked). */
export function decodeServeReply(raw: unknown): ServeReply {
  const s = 'serve-1.lua';
  if (int(s, raw, 0) < 0) return agentAuthRefusal(s, raw);
  return { ok: true, epoch: int(s, raw, 0) };
}

/**
 * Switches an agent out of observation mode: the agent with its token, or an operator (empty
 * token fields) who may set its weight too.
 */
export const serveScript = defineScript({
  lua: new URL('./serve-1.lua', import.meta.url),
  command: 'reachServe',
  keys: ['agent'],
  args: ['tokenHash', 'tokenEpoch', 'weight'],
  decode: decodeServeReply,
});
