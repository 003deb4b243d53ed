// `npm start`: install what is missing, build what changed, then run Redis, InfluxDB,
// registry-sync, the router and three echo agents until Ctrl-C. `npm start -- --cluster` runs
// the seed's deployment instead: a Redis Cluster (3 masters, a replica each), InfluxDB,
// 2 registry-sync instances and 3 routers behind nginx, and the agents. The launcher is
// @agent-reach/launcher (apps/launcher), run from its build with the services' builds, as
// production runs them: `node --conditions=agent-reach-dist apps/<service>/dist/server.js`.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  banner,
  BootstrapError,
  checkNode,
  ensureNodeModules,
  ensureSystemPackages,
  root,
  run,
  runMain,
} from './ensure.mjs';

const args = process.argv.slice(2);
const cluster = args.includes('--cluster');

runMain(async () => {
  checkNode();
  banner('[1/4] npm dependencies');
  await ensureNodeModules();
  banner('[2/4] system packages: redis-server, influxd, nginx');
  await ensureSystemPackages({ cluster });
  // turbo rebuilds only what changed since the last build (its cache), so this is quick after
  // the first time; a fresh clone builds everything the launcher starts.
  const build = ['turbo', 'run', 'build', '--filter=@agent-reach/launcher...'];
  banner(`[3/4] npx ${build.join(' ')}`);
  const built = await run('npx', [...build, '--output-logs=errors-only']);
  if (built !== 0) throw new BootstrapError(`the build failed with exit code ${built}`);
  banner(
    cluster
      ? '[4/4] starting a Redis Cluster, InfluxDB, 2 registry-sync and 3 routers behind nginx, three echo agents'
      : '[4/4] starting Redis, InfluxDB, registry-sync, router and three echo agents',
  );
  return launch(args);
});

/** Runs the built launcher in the foreground with `args`; resolves with its exit code. */
function launch(args) {
  const main = join(root, 'apps/launcher/dist/main.js');
  const child = spawn(process.execPath, ['--conditions=agent-reach-dist', main, ...args], {
    stdio: 'inherit',
    cwd: root,
  });
  // The terminal's Ctrl-C reaches the launcher directly (same process group), and it stops
  // everything in order: we only wait for it. A SIGTERM sent to us alone is passed on.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 1)));
  });
}
