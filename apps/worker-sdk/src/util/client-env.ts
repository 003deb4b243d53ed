import {
  clientSetting,
  deprecatedSettingMessage,
  type ClientSettingName,
} from '@agent-reach/protocol';

/**
 * Node's code of the warning for a client setting given under an earlier spelling (`AGENT_ID`
 * for `REACH_AGENT_ID`, …). Deprecation codes are never reused for another deprecation.
 */
export const RENAMED_SETTING_WARNING = 'REACHDEP001';

/** Earlier spellings already warned about: one warning per spelling and process. */
const warned = new Set<string>();

/**
 * A client setting from the environment: `REACH_KEY`, `REACH_ROUTER_URL`, `REACH_REGISTRY_URL`,
 * `REACH_AGENT_ID` or `REDIS_URL` (docs/SETTINGS.md, Clients). An earlier spelling
 * (`REACH_API_KEY`, `ROUTER_URL`, `REGISTRY_URL`, `AGENT_ID`) is still read, for one release,
 * with a one-line DeprecationWarning naming the new one. Undefined when unset or blank; no default
 * is applied.
 */
export function clientSettingFromEnv(
  name: ClientSettingName,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return clientSetting(name, env, (old, current) => {
    if (warned.has(old)) return;
    warned.add(old);
    process.emitWarning(deprecatedSettingMessage(old, current), {
      type: 'DeprecationWarning',
      code: RENAMED_SETTING_WARNING,
    });
  });
}
