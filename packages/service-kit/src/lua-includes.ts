import { FINAL_TASK_STATUSES, WORKER_GROUP } from '@agent-reach/protocol';

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
  /**
   * `slots_taken(held, inbox)`: the slots an agent's deliveries hold (docs/ARCHITECTURE.md,
   * Slots), given `held`, the length of its pending hash. That hash counts every delivery until registry-sync applies the ack that ends
   * it; its inbox's group counts those the agent has not XACKed (read and unacknowledged, or not
   * read yet), and a worker XACKs right after its completion. The smaller is taken: a slot frees
   * when the worker is done, with or without registry-sync, and an entry the group still holds
   * after its task was taken back (never XACKed) does not keep a slot once the hash lets it go.
   */
  'slots-taken': [
    'local function slots_taken(held, inbox)',
    "  if held == 0 or redis.call('EXISTS', inbox) == 0 then return held end",
    "  for _, g in ipairs(redis.call('XINFO', 'GROUPS', inbox)) do",
    '    local f = {}',
    '    for j = 1, #g, 2 do f[g[j]] = g[j + 1] end',
    `    if f['name'] == '${WORKER_GROUP}' then`,
    "      local open = tonumber(f['pending'])",
    '      if open >= held then return held end',
    "      if type(f['lag']) == 'number' then",
    "        open = open + f['lag']",
    '      else',
    '        -- Redis cannot tell the lag (an unread entry was deleted): count what follows the last read.',
    "        open = open + #redis.call('XRANGE', inbox, '(' .. f['last-delivered-id'], '+', 'COUNT', held)",
    '      end',
    '      return math.min(held, open)',
    '    end',
    '  end',
    '  return held',
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
