import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';
import { slots } from '../reply-slots.ts';

const SCRIPT = 'publish-callback-n.lua';

/** Per result: its entry id on the topic, or null when it was published before. */
export function decodePublishReplies(raw: unknown): (string | null)[] {
  return slots(SCRIPT, raw).map((id) => {
    if (typeof id === 'string') return id;
    if (id === 0) return null;
    throw new ScriptReplyError(SCRIPT, raw, 'a result is neither an entry id nor 0');
  });
}

/**
 * Publishes a tick's final results for one callback topic, each once (callbacks.ts
 * `CallbackPublisher`).
 */
export const publishCallbackScript = defineScript({
  lua: new URL('./publish-callback-n.lua', import.meta.url),
  command: 'reachPublishCallback',
  keys: ['topic', 'marks'],
  moreKeys: 'notices',
  args: ['markTtlS', 'maxLen', 'topicTtlS'],
  each: { name: 'results', fields: ['mark'], list: 'entry' },
  decode: decodePublishReplies,
});
