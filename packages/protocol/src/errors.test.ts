import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './errors.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

describe('docs/errors.md', () => {
  it.each(Object.keys(ERROR_CODES))('explains %s with how to fix it', (code) => {
    expect(doc).toContain(`\n## ${code}\n`);
    const section = doc.split(`\n## ${code}\n`)[1]?.split('\n## ')[0]?.trim() ?? '';
    expect(section.length).toBeGreaterThan(20);
    expect(doc).toMatch(
      new RegExp(`\\| \`${code}\` +\\| ${ERROR_CODES[code as keyof typeof ERROR_CODES]} +\\|`),
    );
  });
});
