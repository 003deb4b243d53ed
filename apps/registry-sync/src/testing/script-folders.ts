import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyScript } from '@agent-reach/service-kit';

/** The `.lua` files of a folder of scripts and the definitions its modules export. */
export interface ScriptFolder {
  /** The `.lua` files, by name. */
  lua: string[];
  /** Every script definition the folder's `.ts` modules (tests aside) export. */
  definitions: AnyScript[];
}

function isScript(value: unknown): value is AnyScript {
  return (
    typeof value === 'object' &&
    value !== null &&
    'lua' in value &&
    value.lua instanceof URL &&
    'command' in value &&
    'argv' in value
  );
}

/** Reads the folder `dir` (a `file:` URL ending in `/`): its scripts and their definitions. */
export async function readScriptFolder(dir: URL): Promise<ScriptFolder> {
  const files = readdirSync(dir).sort();
  const definitions: AnyScript[] = [];
  for (const file of files) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const exports = (await import(fileURLToPath(new URL(file, dir)))) as Record<string, unknown>;
    for (const value of Object.values(exports)) if (isScript(value)) definitions.push(value);
  }
  return { lua: files.filter((f) => f.endsWith('.lua')), definitions };
}

/** How many definitions each `.lua` file has, and the definitions of files elsewhere. */
export function definitionsPerFile(folder: ScriptFolder, dir: URL): Record<string, number> {
  const count: Record<string, number> = Object.fromEntries(folder.lua.map((f) => [f, 0]));
  for (const script of folder.definitions) {
    const path = fileURLToPath(script.lua);
    const key = path.startsWith(fileURLToPath(dir)) ? basename(path) : path;
    count[key] = (count[key] ?? 0) + 1;
  }
  return count;
}
