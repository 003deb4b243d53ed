import { defineScript } from '@agent-reach/service-kit';
import { int } from './reply-slots.ts';

/** Decodes snapshot-2.lua's `{ version, written_at_ms }`. */
export function decodeSnapshotReply(raw: unknown): { version: number; writtenAt: number } {
  const s = 'snapshot-2.lua';
  return { version: int(s, raw, 0), writtenAt: int(s, raw, 1) };
}

/** Writes the next version of the registry snapshot and announces it. */
export const snapshotScript = defineScript({
  lua: new URL('./snapshot-2.lua', import.meta.url),
  command: 'reachSnapshot',
  keys: ['snapshot', 'version'],
  args: ['agents', 'channel'],
  decode: decodeSnapshotReply,
});
