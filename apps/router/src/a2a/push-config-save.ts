import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** Decodes push-config-save-2.lua's 1 saved (or nothing to save), 0 too many configs. */
export function decodePushConfigSave(raw: unknown): boolean {
  if (raw !== 0 && raw !== 1)
    throw new ScriptReplyError('push-config-save-2.lua', raw, 'not 0 or 1');
  return raw === 1;
}

/**
 * Saves a task's A2A push config and points the task's final result at the push topic
 * (push-configs.ts `PushConfigStore`); false when the task has too many configs.
 */
export const pushConfigSaveScript = defineScript({
  lua: new URL('./push-config-save-2.lua', import.meta.url),
  command: 'reachPushConfigSave',
  keys: ['configs', 'task'],
  args: ['configId', 'config', 'pushTopic', 'pendingTtlMs', 'waitPrefix', 'maxConfigs'],
  decode: decodePushConfigSave,
});
