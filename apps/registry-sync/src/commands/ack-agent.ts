import {
  refusalOf,
  ScriptReplyError,
  streamIdMs,
  type AgentPlacement,
  type Reply,
} from '@agent-reach/protocol';
import { defineScript, type Named, type ScriptArg } from '@agent-reach/service-kit';
import { int, jsonList, list, text } from './reply-slots.ts';

/** One ack's agent step (ack-agent-3.lua). */
export type AckAgentReply = Reply<
  {
    /** When the attempt was delivered (its entry id's time); 0 when unknown. */
    sentAt: number;
    /** The pool entry to delete once the task step agrees; '' for none. */
    poolEntry: string;
    /** The agent's execution time was recorded in this step. */
    speedTracked: boolean;
    /** The pending entry was a liveness probe's (marked by deliver-3.lua). */
    probe: boolean;
    /** The pending entry was a shadow copy's (marked by deliver-3.lua). */
    shadow: boolean;
    /** The delivery's entry id (the inbox's, or the pool's); '' when unknown. */
    entryId: string;
    /** The agent's region, tags and capabilities, when the ack may take a pooled task. */
    placement?: Required<AgentPlacement>;
  },
  'unknown_agent' | 'stale_epoch'
>;

/**
 * Decodes ack-agent-3.lua's reply to a batch: the agent's placement, then six slots per ack
 * (code, entry id, pool entry, speed tracked, kind, placement applies), one reply per ack.
 */
export function decodeAckAgentReplies(raw: unknown): AckAgentReply[] {
  const s = 'ack-agent-3.lua';
  const slots = list(s, raw);
  if (slots.length < 3 || (slots.length - 3) % 6 !== 0)
    throw new ScriptReplyError(s, raw, 'not a placement and six slots per ack');
  const placement = {
    region: text(s, raw, 0),
    tags: jsonList(s, raw, 1),
    capabilities: jsonList(s, raw, 2),
  };
  const out: AckAgentReply[] = [];
  for (let i = 3; i < slots.length; i += 6) {
    const code = int(s, raw, i);
    if (code < 0) {
      out.push({ ok: false, refusal: refusalOf(s, code, ['unknown_agent', 'stale_epoch'], raw) });
      continue;
    }
    const entryId = text(s, raw, i + 1);
    out.push({
      ok: true,
      sentAt: entryId ? streamIdMs(entryId) : 0,
      poolEntry: text(s, raw, i + 2),
      speedTracked: int(s, raw, i + 3) === 1,
      probe: int(s, raw, i + 4) === 1,
      shadow: int(s, raw, i + 4) === 2,
      entryId,
      ...(int(s, raw, i + 5) === 1 ? { placement } : {}),
    });
  }
  return out;
}

/** The arguments of each ack in an {@link ackAgentScript} call, in the order the script reads them. */
const ACK_FIELDS = [
  'stage',
  'taskId',
  'epoch',
  'attempt',
  'ackAt',
  'pool',
  'poolEntry',
  'capability',
  'durationMs',
  'slowMs',
  'ewmaWeight',
  'folded',
] as const;

/** One ack of an {@link ackAgentScript} call. */
export type AckAgentItem = Named<typeof ACK_FIELDS, ScriptArg>;

/**
 * The agent's side of a batch of one agent's acks (fencing, its slots, pending entries, speed),
 * one item per ack; the reply holds one {@link AckAgentReply} per item, in order.
 */
export const ackAgentScript = defineScript({
  lua: new URL('./ack-agent-3.lua', import.meta.url),
  command: 'reachAckAgent',
  keys: ['agent', 'pending', 'inbox'],
  args: [],
  each: { name: 'acks', fields: ACK_FIELDS },
  decode: decodeAckAgentReplies,
});
