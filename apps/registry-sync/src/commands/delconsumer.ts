import { defineScript } from '@agent-reach/service-kit';
import { flag } from './reply-slots.ts';

/** Decodes delconsumer-1.lua's reply: whether the consumer was deleted (false: it still holds entries). */
export function decodeDelConsumerReply(raw: unknown): boolean {
  return flag('delconsumer-1.lua', raw);
}

/** Deletes an inbox's consumer only when it holds no pending entry. */
export const delConsumerScript = defineScript({
  lua: new URL('./delconsumer-1.lua', import.meta.url),
  command: 'reachDelConsumer',
  keys: ['inbox'],
  args: ['group', 'consumer'],
  decode: decodeDelConsumerReply,
});
