/**
 * Every endpoints script has one typed definition beside it (`<name>.ts` for `<name>-N.lua`), and
 * each script's KEYS/ARGV header names the keys and arguments its definition passes, in the same
 * order. No Redis: the files are read.
 */
import { describe, expect, it } from 'vitest';
import { scriptHeaderProblems } from '@agent-reach/service-kit';
import { definitionsPerFile, readScriptFolder } from '../../testing/script-folders.ts';

const dir = new URL('./', import.meta.url);
const folder = await readScriptFolder(dir);
const others = [
  await readScriptFolder(new URL('../../commands/', import.meta.url)),
  await readScriptFolder(new URL('../../health/commands/', import.meta.url)),
];

describe('the scripts of endpoints/commands/', () => {
  it('have one definition each', () => {
    const count = definitionsPerFile(folder, dir);
    expect(Object.keys(count).length).toBeGreaterThan(0);
    expect(count).toEqual(Object.fromEntries(Object.keys(count).map((f) => [f, 1])));
  });

  it('have headers that agree with their definitions', () => {
    expect(folder.definitions.flatMap((s) => scriptHeaderProblems(s))).toEqual([]);
  });

  it('have command names no other script of the service uses (they share a connection)', () => {
    const names = [folder, ...others].flatMap((f) => f.definitions).map((s) => s.command);
    expect(new Set(names).size).toBe(names.length);
  });
});
