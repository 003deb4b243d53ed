import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AnyScript } from './script-def.ts';

/** One `KEYS[i] name` or `ARGV[i] name` entry of a script's header; `more` for `[i..]`. */
export interface HeaderEntry {
  kind: 'KEYS' | 'ARGV';
  index: number;
  more: boolean;
  name: string;
  /** The entry's text after its name, up to the next entry. */
  text: string;
}

/**
 * The `KEYS[i]`/`ARGV[i]` entries of the `--[[ ... ]]` comment a script starts with. An entry
 * starts a line or follows two spaces, and names its slot with the word after it:
 * `KEYS[1] task: the task hash   ARGV[2] attempt: the expected attempt`. A `KEYS[3..]` or
 * `ARGV[4..]` entry names a group that repeats; the group's fields follow in the order the script
 * reads them, then the name of the list each item ends with, if it has one. A mention such as "counted from ARGV[8]" inside a sentence is not an entry.
 */
export function parseScriptHeader(lua: string): HeaderEntry[] {
  const head = /^--\[\[([\s\S]*?)\]\]/.exec(lua.trimStart())?.[1] ?? '';
  const starts = /(?:^|\n)[ \t]*|[ \t]{2,}/g;
  const entry = /^(KEYS|ARGV)\[(\d+)(\.\.)?\][ \t]+([A-Za-z_]\w*)/;
  const found: { at: number; end: number; e: Omit<HeaderEntry, 'text'> }[] = [];
  for (const m of head.matchAll(starts)) {
    const at = (m.index ?? 0) + m[0].length;
    const hit = entry.exec(head.slice(at));
    if (!hit) continue;
    found.push({
      at,
      end: at + hit[0].length,
      e: {
        kind: hit[1] as 'KEYS' | 'ARGV',
        index: Number(hit[2]),
        more: hit[3] !== undefined,
        name: hit[4] as string,
      },
    });
  }
  return found.map((f, i) => ({
    ...f.e,
    text: head.slice(f.end, found[i + 1]?.at ?? head.length),
  }));
}

/**
 * Where a script's header and its definition disagree: the names and order of its keys and
 * arguments, its repeated groups and their fields. Empty when they agree.
 */
export function scriptHeaderProblems(script: AnyScript): string[] {
  const file = fileURLToPath(script.lua).split('/').pop() as string;
  const entries = parseScriptHeader(readFileSync(script.lua, 'utf8'));
  const problems: string[] = [];
  const check = (
    kind: 'KEYS' | 'ARGV',
    fixed: readonly string[],
    more: { name: string; fields?: readonly string[] } | undefined,
  ) => {
    const listed = entries.filter((e) => e.kind === kind);
    const want = [
      ...fixed.map((name, i) => ({ index: i + 1, more: false, name })),
      ...(more ? [{ index: fixed.length + 1, more: true, name: more.name }] : []),
    ];
    const show = (l: readonly { index: number; more: boolean; name: string }[]) =>
      l.map((e) => `${kind}[${e.index}${e.more ? '..' : ''}] ${e.name}`).join(', ') || 'none';
    const same =
      listed.length === want.length &&
      listed.every(
        (e, i) =>
          e.index === want[i]?.index && e.more === want[i]?.more && e.name === want[i]?.name,
      );
    if (!same) problems.push(`${file}: header has ${show(listed)}; definition has ${show(want)}`);
    const group = listed.find((e) => e.more);
    if (same && group && more?.fields) {
      const words: readonly string[] = group.text.match(/[A-Za-z_]\w*/g) ?? [];
      let at = 0;
      for (const field of more.fields) {
        const found = words.indexOf(field, at);
        if (found < 0) {
          problems.push(
            `${file}: ${kind}[${group.index}..] ${group.name} lists no ${field} (fields ${more.fields.join(', ')}, in order)`,
          );
          break;
        }
        at = found + 1;
      }
    }
  };
  check('KEYS', script.keys, script.moreKeys ? { name: script.moreKeys } : undefined);
  const each = script.each;
  check(
    'ARGV',
    script.args,
    each
      ? {
          name: each.name,
          // An item's list comes after its fields.
          fields: each.list === undefined ? each.fields : [...each.fields, each.list],
        }
      : undefined,
  );
  return problems;
}

/** True for a value `defineScript` made. */
function isScript(value: unknown): value is AnyScript {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { lua?: unknown }).lua instanceof URL &&
    typeof (value as { command?: unknown }).command === 'string' &&
    typeof (value as { argv?: unknown }).argv === 'function'
  );
}

/**
 * What is wrong with the scripts of a folder (a unit test's check, no Redis): a `.lua` file that
 * no module of the folder defines, or that two definitions claim, a definition of a file that is
 * not there, and each definition's {@link scriptHeaderProblems}. Imports every module of the
 * folder (not its tests) to find the definitions they export.
 */
export async function scriptFolderProblems(dir: URL): Promise<string[]> {
  const files = readdirSync(dir);
  const found = new Set<AnyScript>();
  for (const file of files) {
    if (!/\.[cm]?[jt]s$/.test(file) || /\.test\.[cm]?[jt]s$/.test(file) || file.endsWith('.d.ts'))
      continue;
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) if (isScript(value)) found.add(value);
  }
  const problems: string[] = [];
  const byFile = new Map<string, AnyScript[]>();
  for (const script of found) {
    const file = fileURLToPath(script.lua).split('/').pop() as string;
    if (new URL('.', script.lua).href !== new URL('.', dir).href) continue;
    byFile.set(file, [...(byFile.get(file) ?? []), script]);
  }
  for (const file of files.filter((f) => f.endsWith('.lua'))) {
    const defs = byFile.get(file) ?? [];
    if (defs.length !== 1) problems.push(`${file}: ${defs.length} definitions`);
  }
  for (const [file, defs] of byFile) {
    if (!files.includes(file)) problems.push(`${file}: defined, but there is no such file`);
    else for (const def of defs) problems.push(...scriptHeaderProblems(def));
  }
  return problems;
}
