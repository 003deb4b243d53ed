import { defineScript } from '@agent-reach/service-kit';
import { int } from './reply-slots.ts';

/** Decodes the `{ version, written_at_ms }` of snapshot-3.lua and delta-2.lua. */
export function versionReply(script: string) {
  return (raw: unknown): { version: number; writtenAt: number } => ({
    version: int(script, raw, 0),
    writtenAt: int(script, raw, 1),
  });
}

/** Decodes snapshot-3.lua's `{ version, written_at_ms }`. */
export const decodeSnapshotReply = versionReply('snapshot-3.lua');

/** Writes the next version of the registry snapshot and announces it. */
export const snapshotScript = defineScript({
  lua: new URL('./snapshot-3.lua', import.meta.url),
  command: 'reachSnapshot',
  keys: ['snapshot', 'version', 'deltas'],
  args: ['agents', 'channel'],
  decode: decodeSnapshotReply,
});
