import { FINAL_TASK_STATUSES } from '@agent-reach/protocol';

/**
 * Lua shared by several scripts, written once: a script line `--#include <name>` is replaced by
 * the text here when the script is loaded (`loadScripts`). Each is built from the TypeScript
 * constants it mirrors, so the Lua and the TypeScript cannot disagree.
 */
export const LUA_INCLUDES: Readonly<Record<string, string>> = {
  /** `is_final(status)`: true for a status no attempt leaves (completed, dead, cancelled). */
  'is-final': [
    'local function is_final(status)',
    `  return ${FINAL_TASK_STATUSES.map((s) => `status == '${s}'`).join(' or ')}`,
    'end',
  ].join('\n'),
};

const INCLUDE = /^--#include ([\w-]+)[ \t]*$/gm;

/** `lua` with each `--#include <name>` line replaced by its text; an unknown name throws. */
export function expandLuaIncludes(lua: string, file: string): string {
  return lua.replace(INCLUDE, (_line, name: string) => {
    const text = LUA_INCLUDES[name];
    if (text === undefined) throw new Error(`${file}: no Lua include named ${name}`);
    return text;
  });
}
