import { ScriptReplyError } from '@agent-reach/protocol';
import { defineScript } from '@agent-reach/service-kit';

/** Decodes requeue-1.lua's reply: the new pool entry's id, or undefined when the entry was gone. */
export function decodeRequeueReply(raw: unknown): string | undefined {
  if (typeof raw !== 'string') throw new ScriptReplyError('requeue-1.lua', raw, 'not a string');
  return raw === '' ? undefined : raw;
}

/** Puts a pool entry back as a new entry for another pull agent. */
export const requeueScript = defineScript({
  lua: new URL('./requeue-1.lua', import.meta.url),
  command: 'reachRequeue',
  keys: ['pool'],
  args: ['group', 'entryId'],
  decode: decodeRequeueReply,
});
