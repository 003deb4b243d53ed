import { defineScript } from '@agent-reach/service-kit';
import { oneOf } from '../reply-slots.ts';

/** What giving a claim back did: released, not ours (or delivered), or kept (seen by another). */
export type ReleaseClaimReply = 'released' | 'not_ours' | 'kept';

const REPLIES = { 0: 'not_ours', 1: 'released', 2: 'kept' } as const;

/** Gives a claimed task_id back when no agent could take the task (release-claim-2.lua). */
export const releaseClaimScript = defineScript({
  lua: new URL('./release-claim-2.lua', import.meta.url),
  command: 'reachReleaseClaim',
  keys: ['task', 'timeline'],
  args: ['nonce'],
  decode: (raw): ReleaseClaimReply => REPLIES[oneOf('release-claim-2.lua', raw, [0, 1, 2])],
});
