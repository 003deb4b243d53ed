import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISPATCH_SCRIPTS } from './scripts.ts';

describe('DISPATCH_SCRIPTS', () => {
  it('holds every script of the package under its file name', () => {
    const files = ['commands', 'task', 'lease'].flatMap((dir) =>
      readdirSync(new URL(`./${dir}/`, import.meta.url))
        .filter((f) => f.endsWith('.lua'))
        .map((f) => `${dir}/${f}`),
    );
    const listed = Object.entries(DISPATCH_SCRIPTS).map(([name, script]) => {
      expect(script.name).toBe(name);
      return script.lua.href.slice(new URL('.', import.meta.url).href.length);
    });
    expect(listed.sort()).toEqual(files.sort());
  });
});
