import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError, type TaskStatus } from '@agent-reach/protocol';

/**
 * Records the sent stage of a task put in its capability's pool (record-pooled-1.lua): the task's
 * status after it, or undefined when the attempt is no longer current.
 */
export const recordPooledScript = defineScript({
  lua: new URL('./record-pooled-1.lua', import.meta.url),
  command: 'reachRecordPooled',
  keys: ['task'],
  args: ['attempt', 'messageId', 'sentAt', 'stream'],
  decode: (raw): TaskStatus | undefined => {
    if (raw === null) return undefined;
    if (typeof raw !== 'string')
      throw new ScriptReplyError('record-pooled-1.lua', raw, 'not a status');
    return raw as TaskStatus;
  },
});
