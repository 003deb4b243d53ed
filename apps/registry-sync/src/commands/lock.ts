import { defineScript } from '@agent-reach/service-kit';
import { flag } from './reply-slots.ts';

/** Decodes lock-1.lua's reply: whether the caller holds the lock. */
export function decodeLockReply(raw: unknown): boolean {
  return flag('lock-1.lua', raw);
}

/** Takes or renews a lease lock for a duty that must run once across instances. */
export const lockScript = defineScript({
  lua: new URL('./lock-1.lua', import.meta.url),
  command: 'reachLock',
  keys: ['lock'],
  args: ['owner', 'leaseMs'],
  decode: decodeLockReply,
});
