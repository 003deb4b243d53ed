import { describe, expect, it } from 'vitest';
import { CLIENT_SETTINGS } from './client.ts';
import {
  markdownTable,
  readmeSettingsTable,
  SETTINGS_DOCS_COMMAND,
  settingsEnvNames,
} from './doc.ts';
import { GENERATED_FILES } from './generated-files.ts';
import type { SettingsTable } from './define.ts';
import { REGISTRY_SETTINGS } from './registry.ts';
import { ROUTER_SETTINGS } from './router.ts';
import { SHARED_SETTINGS } from './shared.ts';

describe('the files made from the settings tables', () => {
  it.each(GENERATED_FILES.map((f) => [f.name, f] as const))(
    `%s agrees with the tables (else run ${SETTINGS_DOCS_COMMAND})`,
    (_name, file) => {
      const current = file.read();
      expect(current, `${file.name} is missing`).not.toBe('');
      expect(current).toBe(file.render(current));
    },
  );

  it('lists every variable of every scope in docs/SETTINGS.md, once per scope it belongs to', () => {
    const doc = GENERATED_FILES.find((f) => f.name === 'docs/SETTINGS.md')?.read() ?? '';
    for (const env of settingsEnvNames()) expect(doc).toContain(`\`${env}\``);
  });

  it('keeps the README to the ten settings a newcomer needs', () => {
    expect(readmeSettingsTable().split('\n')).toHaveLength(2 + 10);
  });

  it('aligns a table as Prettier does, pipes escaped', () => {
    expect(markdownTable(['a', 'bb'], [['x|y', 'z']])).toBe(
      ['| a    | bb  |', '| ---- | --- |', '| x\\|y | z   |'].join('\n'),
    );
  });
});

describe('the settings tables', () => {
  const scopes = { SHARED_SETTINGS, ROUTER_SETTINGS, REGISTRY_SETTINGS, CLIENT_SETTINGS };

  it('give each variable to one row of a scope, and every row a doc line', () => {
    for (const [scope, table] of Object.entries(scopes)) {
      const envs = Object.values<{ env?: string; doc: string }>(table).flatMap((row) => {
        expect(row.doc.length, `${scope}: a row without a doc line`).toBeGreaterThan(10);
        return row.env === undefined ? [] : [row.env];
      });
      expect(new Set(envs).size, scope).toBe(envs.length);
    }
  });

  it('name the router and registry-sync variables apart from the shared ones', () => {
    const shared = new Set<string | undefined>(Object.values(SHARED_SETTINGS).map((r) => r.env));
    for (const table of [ROUTER_SETTINGS, REGISTRY_SETTINGS] as SettingsTable[])
      for (const row of Object.values(table)) expect(shared.has(row.env), row.env).toBe(false);
  });

  it('keep every default within its own bounds', () => {
    for (const table of [SHARED_SETTINGS, ROUTER_SETTINGS, REGISTRY_SETTINGS])
      for (const row of Object.values<Record<string, unknown>>(table)) {
        const value = row['default'];
        if (typeof value === 'number') {
          if (typeof row['minimum'] === 'number')
            expect(value).toBeGreaterThanOrEqual(row['minimum']);
          if (typeof row['maximum'] === 'number') expect(value).toBeLessThanOrEqual(row['maximum']);
          if (typeof row['exclusiveMinimum'] === 'number')
            expect(value).toBeGreaterThan(row['exclusiveMinimum']);
        }
        if (typeof value === 'string' && typeof row['pattern'] === 'string')
          expect(value).toMatch(new RegExp(row['pattern']));
        if (Array.isArray(row['values']))
          expect(row['values']).toContain(value ?? row['values'][0]);
      }
  });
});
