/**
 * Every environment variable the code reads is a row of the settings tables, so docs/SETTINGS.md
 * (generated from them) names it: the sources of the services, the packages they run, the SDKs,
 * the CLI, the launcher and the example agents are searched for reads of variables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_VARIABLES, settingsEnvNames } from './doc.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Where the code that reads settings lives; tests, test doubles and fixtures are left out. */
const SOURCES = [
  'apps/router/src',
  'apps/registry-sync/src',
  'apps/relay/src',
  'apps/worker-sdk/src',
  'apps/worker-sdk/examples',
  'apps/cli/src',
  'apps/launcher/src',
  'packages/protocol/src',
  'packages/service-kit/src',
  'packages/events/src',
  'packages/dispatch/src',
  'packages/analytics/src',
  'sdks/python/src',
  'sdks/python/examples',
];
const LEFT_OUT = /(\.test\.ts$|\/testing\/|\/fixtures\/|\/node_modules\/|\/dist\/)/;

/** Reads of a variable: `env.X`, `env['X']`, `process.env.X`, Python's `os.environ[...]`, and a
 * quoted name with a prefix of ours (lists of variables read in a loop). */
const READS = [
  /\benv(?:\.|\[['"])([A-Z][A-Z0-9_]+)\b/g,
  /os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']/g,
  /['"`]((?:REACH|REDIS|INFLUX|OTEL)_[A-Z0-9_]+)['"`]/g,
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return /\.(ts|py)$/.test(entry.name) && !LEFT_OUT.test(path) ? [path] : [];
  });
}

/** Variable → the files that read it. */
function readsInSources(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const source of SOURCES)
    for (const file of files(join(ROOT, source))) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of READS)
        for (const match of text.matchAll(pattern)) {
          const name = match[1] ?? '';
          found.set(name, [...new Set([...(found.get(name) ?? []), relative(ROOT, file)])]);
        }
    }
  return found;
}

describe('the variables the code reads', () => {
  const known = new Set([...settingsEnvNames(), ...EXAMPLE_VARIABLES]);
  const reads = readsInSources();

  it('are found at all (the search still matches the code)', () => {
    for (const name of ['REACH_KEY', 'REDIS_URL', 'REDIS_TLS_CA', 'INFLUX_URL', 'ROUTER_PORT'])
      expect(reads.has(name), name).toBe(true);
  });

  it('are each a row of the settings tables, so docs/SETTINGS.md names them', () => {
    const unknown = [...reads].filter(([name]) => !known.has(name));
    expect(
      unknown.map(([name, where]) => `${name} (read in ${where.join(', ')})`),
      'add a row for each to its scope’s table in packages/protocol/src/settings/',
    ).toEqual([]);
  });
});
