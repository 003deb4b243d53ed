import { defineScript } from '@agent-reach/service-kit';
import { int, str } from './reply-slots.ts';

/** release-3.lua's reply. */
export interface ReleaseReply {
  /** The attempt held a slot, now free. */
  released: boolean;
  /** A pull agent's pool task: the pool and entry the caller still has to settle. */
  pool?: { capability: string; entryId: string };
}

/** Decodes release-3.lua's `{ released, pool capability or "", pool entry id or "" }`. */
export function decodeReleaseReply(raw: unknown): ReleaseReply {
  const s = 'release-3.lua';
  const capability = str(s, raw, 1);
  const entryId = str(s, raw, 2);
  return {
    released: int(s, raw, 0) === 1,
    ...(capability && entryId ? { pool: { capability, entryId } } : {}),
  };
}

/** Takes a task attempt back from an agent: frees its slot and its inbox entry. */
export const releaseScript = defineScript({
  lua: new URL('./release-3.lua', import.meta.url),
  command: 'reachRelease',
  keys: ['agent', 'pending', 'inbox'],
  args: ['taskId', 'attempt', 'group'],
  decode: decodeReleaseReply,
});
