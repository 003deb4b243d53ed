import { defineScript } from '@agent-reach/service-kit';
import { versionReply } from './snapshot.ts';

/** Writes the next version as a delta of the agents that changed and announces it. */
export const deltaScript = defineScript({
  lua: new URL('./delta-2.lua', import.meta.url),
  command: 'reachDelta',
  keys: ['version', 'deltas'],
  args: ['agents', 'removed', 'channel', 'maxlen'],
  decode: versionReply('delta-2.lua'),
});
