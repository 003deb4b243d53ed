/**
 * What the built services (and the image) rely on: every workspace package that builds names
 * its build under the agent-reach-dist condition for each export, beside its TypeScript
 * source. An export left on the source alone would make `node apps/router/dist/server.js` load
 * a .ts file, which Node cannot run.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_CONDITION, ROOT } from './services.ts';

interface Manifest {
  name: string;
  scripts?: Record<string, string>;
  exports?: Record<string, string | Record<string, string>>;
}

const workspaces = ['packages', 'apps'].flatMap((group) =>
  readdirSync(join(ROOT, group))
    .map((dir) => join(ROOT, group, dir))
    .filter((dir) => existsSync(join(dir, 'package.json'))),
);
const built = workspaces
  .map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
  }))
  .filter(({ manifest }) => manifest.scripts?.['build']);

describe('the build', () => {
  it('covers the packages the services import', () => {
    const names = built.map((b) => b.manifest.name);
    for (const name of [
      'protocol',
      'dispatch',
      'events',
      'service-kit',
      'analytics',
      'router',
      'registry-sync',
      'relay',
    ]) {
      expect(names).toContain(`@agent-reach/${name}`);
    }
  });

  for (const { dir, manifest } of built) {
    it(`${manifest.name}: every export has its build beside its source`, () => {
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        if (subpath.includes('testing')) continue; // test helpers, never loaded by a service
        expect(typeof target, `${subpath} is a string: no ${DIST_CONDITION}`).toBe('object');
        const { [DIST_CONDITION]: dist, default: source } = target as Record<string, string>;
        expect(existsSync(join(dir, source!)), `${subpath} → ${source}`).toBe(true);
        // src/x.ts (or examples/x.ts) → dist/x.js, or dist/x.mjs where tsdown bundles.
        const stem = source!.replace(/^\.\/(src\/)?/, './dist/').replace(/\.ts$/, '');
        expect([`${stem}.js`, `${stem}.mjs`], `${subpath}`).toContain(dist);
      }
    });
  }
});
