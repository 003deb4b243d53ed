import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** What taking a slot did: taken, held already by the task_id, or none free. */
export type InflightTakeReply = 'taken' | 'held' | 'full';

const REPLIES: Readonly<Record<number, InflightTakeReply>> = { 0: 'full', 1: 'taken', 2: 'held' };

/** Decodes inflight-take-1.lua's 1 taken, 2 held already, 0 full. */
export function decodeInflightTake(raw: unknown): InflightTakeReply {
  const reply = typeof raw === 'number' ? REPLIES[raw] : undefined;
  if (reply === undefined) throw new ScriptReplyError('inflight-take-1.lua', raw, 'not 0, 1 or 2');
  return reply;
}

/** Takes a slot of a key's in-flight quota, atomically across routers (inflight-quota.ts). */
export const inflightTakeScript = defineScript({
  lua: new URL('./inflight-take-1.lua', import.meta.url),
  command: 'reachInflightTake',
  keys: ['inflight'],
  args: ['taskId', 'now', 'max', 'pruneBefore', 'ttlMs'],
  decode: decodeInflightTake,
});
