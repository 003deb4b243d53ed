// Writes the manifest of a package that is published from its build directory (tsdown's
// outDir): the workspace's own package.json keeps `exports` on the TypeScript sources, which the
// other workspaces, vitest and tsx load, so the published one is made here from it.
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const BUILTINS = new Set(builtinModules);
const IMPORT =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s*)["']([^"'.][^"']*)["']/gm;

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/** The package.json above a resolved file (workspace packages do not export theirs). */
function manifestOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'package.json');
  }
  throw new Error(`no package.json above ${file}`);
}

/** The bare package names the built `.mjs`/`.cjs`/`.d.mts`/`.d.cts` files still import. */
function externalImports(dir) {
  const names = new Set();
  for (const file of readdirSync(dir, { recursive: true })) {
    if (!/\.(m|c)?js$|\.d\.(m|c)?ts$/.test(file)) continue;
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(IMPORT)) {
      const spec = m[1];
      if (spec.startsWith('node:') || BUILTINS.has(packageOf(spec))) continue;
      names.add(packageOf(spec));
    }
  }
  return [...names].sort();
}

/**
 * Writes `<pkgDir>/<outDir>/package.json` for publishing that directory (`npm pack <outDir>`):
 * the workspace manifest's name, version, description and license, the given `exports` and
 * `bin`, and as `dependencies` exactly the packages the built files import, each with the range
 * the workspace (or a package bundled into it) declares. Workspace packages (`@agent-reach/*`)
 * must be bundled: one still imported fails the build, as does an import nobody declares.
 * Copies README.md along.
 */
export function writePublishManifest({ pkgDir, outDir = 'dist', exports, bin, extra = {} }) {
  const req = createRequire(join(pkgDir, 'package.json'));
  const own = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const dir = join(pkgDir, outDir);
  const ranges = { ...own.dependencies };
  for (const dep of Object.keys(own.dependencies ?? {})) {
    if (!dep.startsWith('@agent-reach/')) continue;
    // A bundled workspace package's own dependencies may be imported by the bundle.
    const manifest = JSON.parse(readFileSync(manifestOf(req.resolve(dep)), 'utf8'));
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) ranges[name] ??= range;
  }
  const dependencies = {};
  for (const name of externalImports(dir)) {
    if (name === own.name) continue; // an example importing the package itself
    if (name.startsWith('@agent-reach/')) {
      throw new Error(
        `${own.name}: the build still imports ${name}; bundle it (deps.alwaysBundle)`,
      );
    }
    const range = ranges[name];
    if (!range) throw new Error(`${own.name}: the build imports ${name}, not in dependencies`);
    dependencies[name] = range;
  }
  const manifest = {
    name: own.name,
    version: own.version,
    description: own.description,
    license: own.license,
    type: 'module',
    engines: { node: '>=20.19' },
    ...(bin ? { bin } : {}),
    exports,
    ...extra,
    dependencies,
    publishConfig: own.publishConfig,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  if (existsSync(join(pkgDir, 'README.md'))) {
    copyFileSync(join(pkgDir, 'README.md'), join(dir, 'README.md'));
  }
}
