import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRIES, entryOf, type EntryName } from './entries.ts';

describe('entryOf', () => {
  it('resolves every entry through its package to a TypeScript source without the dist condition', () => {
    for (const name of Object.keys(ENTRIES) as EntryName[]) {
      const file = entryOf(name);
      expect(file, name).toMatch(/\.ts$/);
      expect(existsSync(file), file).toBe(true);
    }
    expect(entryOf('router')).toMatch(/apps\/router\/src\/server\.ts$/);
  });
});
