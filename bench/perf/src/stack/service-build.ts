import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which build of the services a session runs: `dist`, the JavaScript `npm run build` makes and
 * the image ships (node `--conditions=agent-reach-dist`, no loader), or `src`, the TypeScript
 * sources through tsx (about 35 MiB more per process, and a slower start). `auto` takes dist
 * when it is there and no older than the sources, else src.
 */
export type ServiceBuild = 'src' | 'dist';
export type ServiceBuildChoice = ServiceBuild | 'auto';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const SERVICES = ['apps/router', 'apps/registry-sync'];

function newestMs(dir: string, skip: (name: string) => boolean): number {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMs(path, skip) : statSync(path).mtimeMs);
  }
  return newest;
}

const isTest = (name: string) => /\.test\.ts$/.test(name);

/** Workspaces whose dist is missing or older than their sources; empty when dist is current. */
export function staleBuilds(): string[] {
  // The packages the services run from their dist: those that export one.
  const packages = readdirSync(join(root, 'packages'))
    .map((p) => `packages/${p}`)
    .filter((ws) => {
      const manifest = join(root, ws, 'package.json');
      return existsSync(manifest) && readFileSync(manifest, 'utf8').includes('agent-reach-dist');
    });
  const stale: string[] = [];
  for (const ws of [...SERVICES, ...packages]) {
    const src = join(root, ws, 'src');
    if (!existsSync(src)) continue;
    const dist = join(root, ws, 'dist');
    if (!existsSync(dist) || newestMs(src, isTest) > newestMs(dist, () => false)) stale.push(ws);
  }
  return stale;
}

/**
 * Settles `auto`, or checks that `dist` can run: resolves the build with the line the report
 * prints about it. `dist` with a stale build is an error that says what to run.
 */
export function chooseServiceBuild(choice: ServiceBuildChoice): {
  build: ServiceBuild;
  note: string;
} {
  if (choice === 'src') return { build: 'src', note: 'services run from src (tsx)' };
  const stale = staleBuilds();
  if (stale.length === 0)
    return { build: 'dist', note: 'services run from dist (the shipped build)' };
  const what = `dist is missing or older than src in ${stale.join(', ')}`;
  if (choice === 'dist') {
    throw new Error(`--from dist: ${what}; run \`npx turbo run build\` first, or pass --from src`);
  }
  return {
    build: 'src',
    note: `services run from src (tsx): ${what}; run \`npx turbo run build\` to measure the shipped build`,
  };
}

/** A service's entry file in the chosen build: `apps/router/dist/server.js` or `src/server.ts`. */
export function serverEntry(pkg: string, build: ServiceBuild = 'src'): string {
  const src = dirname(fileURLToPath(import.meta.resolve(pkg)));
  return build === 'dist' ? join(dirname(src), 'dist', 'server.js') : join(src, 'server.ts');
}
