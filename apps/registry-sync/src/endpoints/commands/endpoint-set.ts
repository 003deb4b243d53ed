import { defineScript } from '@agent-reach/service-kit';
import { flag } from '../../commands/reply-slots.ts';

/** Decodes endpoint-set-2.lua's reply: whether it wrote (false: the declaration changed). */
export function decodeEndpointSetReply(raw: unknown): boolean {
  return flag('endpoint-set-2.lua', raw);
}

/** Writes or removes an endpoint declaration and its secrets if it is still as read. */
export const endpointSetScript = defineScript({
  lua: new URL('./endpoint-set-2.lua', import.meta.url),
  command: 'reachEndpointSet',
  keys: ['records', 'secrets'],
  args: ['agentId', 'expected', 'record', 'secrets'],
  decode: decodeEndpointSetReply,
});
