// Bootstrap helpers for `npm start` and `npm test`. Plain Node, no npm dependencies: these run
// before `npm install`.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The Debian/Ubuntu package for each server binary, and the URL variables that replace it.
 * `clusterNeeds`: `npm start -- --cluster` needs it whatever is set (nginx fronts the routers).
 */
const SERVERS = [
  { bin: 'redis-server', pkg: 'redis-server', urlEnv: ['REDIS_URL', 'REDIS_CLUSTER_NODES'] },
  // redis-cli joins the nodes of a local Redis Cluster (npm start -- --cluster, tests).
  { bin: 'redis-cli', pkg: 'redis-tools', urlEnv: ['REDIS_URL', 'REDIS_CLUSTER_NODES'] },
  { bin: 'influxd', pkg: 'influxdb', urlEnv: ['INFLUX_URL'] },
  { bin: 'nginx', pkg: 'nginx-light', urlEnv: ['INFLUX_URL'], clusterNeeds: true },
  // Not a server: the console's end-to-end test drives it (CHROMIUM_PATH names another browser).
  { bin: 'chromium', pkg: 'chromium', urlEnv: ['CHROMIUM_PATH'] },
  // Not a binary: redis-py for /usr/bin/python3, which the Python worker SDK (sdks/python) and its
  // test need. Optional: where it cannot be installed, the start goes on and says so.
  {
    bin: 'python3-redis',
    pkg: 'python3-redis',
    urlEnv: [],
    optional: true,
    present: () =>
      spawnSync('/usr/bin/python3', ['-c', 'import redis'], { stdio: 'ignore' }).status === 0,
  },
  // Not binaries: what the Python SDK's test builds its wheel with and installs it by, into a
  // virtualenv of /usr/bin/python3 (test/support/python.ts). Optional, as python3-redis is.
  ...[
    { pkg: 'python3-pip', module: 'pip' },
    { pkg: 'python3-venv', module: 'ensurepip' },
    { pkg: 'python3-setuptools', module: 'setuptools' },
    { pkg: 'python3-wheel', module: 'wheel' },
  ].map(({ pkg, module }) => ({
    bin: pkg,
    pkg,
    urlEnv: [],
    optional: true,
    present: () =>
      spawnSync('/usr/bin/python3', ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0,
  })),
  // Not a server: the alert rules' tests run its promtool (PROMTOOL names another). Optional: only
  // those tests need it, and they say how to install it.
  { bin: 'promtool', pkg: 'prometheus', urlEnv: ['PROMTOOL'], optional: true },
];

/** An error that ends the script with its message and no stack. */
export class BootstrapError extends Error {}

/** Prints a one-line banner for a phase. */
export function banner(text) {
  const line = `==> ${text}`;
  process.stdout.write(process.stdout.isTTY ? `\x1b[1;36m${line}\x1b[0m\n` : `${line}\n`);
}

/** Runs a script's main function; a BootstrapError prints its message and exits 1. */
export function runMain(main) {
  main().then(
    (code) => process.exit(code ?? 0),
    (err) => {
      process.stderr.write(
        `\n${err instanceof BootstrapError ? err.message : (err?.stack ?? String(err))}\n`,
      );
      process.exit(1);
    },
  );
}

/** Runs a command with inherited stdio; resolves with its exit code. */
export function run(command, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', cwd: root, ...opts });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : 1)),
    );
  });
}

function signalNumber(signal) {
  return { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
}

// Debian puts nginx in /usr/sbin, which a non-root PATH often lacks.
const EXTRA_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The path of an executable on PATH (or in the sbin directories), or undefined. */
export function which(name) {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...EXTRA_DIRS]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Installs npm dependencies when node_modules is missing or older than package-lock.json:
 * `npm ci`, or `npm install` when there is no lock file.
 */
export async function ensureNodeModules() {
  const lock = mtime(join(root, 'package-lock.json'));
  const installed = mtime(join(root, 'node_modules', '.package-lock.json'));
  if (lock !== undefined && installed !== undefined && installed >= lock) {
    process.stdout.write('    node_modules is up to date\n');
    return;
  }
  const args = lock === undefined ? ['install'] : ['ci'];
  process.stdout.write(`    running npm ${args.join(' ')}\n`);
  const code = await run('npm', [...args, '--no-audit', '--no-fund']);
  if (code !== 0) throw new BootstrapError(`npm ${args[0]} failed with exit code ${code}`);
}

/** Whether this run needs `server`: not when its URL env is set, unless the cluster needs it. */
function needed(server, env, cluster) {
  return (cluster && server.clusterNeeds) || !server.urlEnv.some((name) => env[name]);
}

/**
 * The server binaries missing for this run (a service whose URL env is set needs none, except
 * nginx with `cluster`: it fronts the routers).
 */
export function missingServers(env = process.env, { cluster = false } = {}) {
  return SERVERS.filter(
    (s) => needed(s, env, cluster) && !(s.present ? s.present() : which(s.bin)),
  );
}

function isDebianRoot() {
  return (
    process.getuid?.() === 0 && existsSync('/etc/debian_version') && which('apt-get') !== undefined
  );
}

function installHint(missing) {
  const pkgs = missing.map((s) => s.pkg).join(' ');
  return [
    `Missing: ${missing.map((s) => s.bin).join(', ')}. Install, then run again:`,
    `  Debian/Ubuntu:  sudo apt-get install -y ${pkgs}`,
    `                  (everything: apt-get install redis-server influxdb nginx-light python3-redis python3-pip python3-venv python3-setuptools python3-wheel prometheus)`,
    `  macOS:          brew install redis influxdb@1 nginx`,
    `Or point REDIS_URL / INFLUX_URL at servers you already run.`,
  ].join('\n');
}

/**
 * Makes sure redis-server, influxd (1.x) and nginx are installed, skipping those whose URL env
 * (REDIS_URL or REDIS_CLUSTER_NODES, INFLUX_URL) is set; with `cluster` (`npm start -- --cluster`)
 * nginx is needed whatever is set. As root on Debian/Ubuntu it installs what is missing with
 * apt-get, keeping the packages' services from starting; elsewhere it throws, saying exactly what
 * to install.
 */
export async function ensureSystemPackages({ cluster = false } = {}) {
  const missing = missingServers(process.env, { cluster });
  if (missing.length === 0) {
    const used = SERVERS.filter((s) => needed(s, process.env, cluster)).map((s) => s.bin);
    process.stdout.write(
      `    ${used.length ? `found ${used.join(', ')}` : 'REDIS_URL and INFLUX_URL given'}\n`,
    );
    return;
  }
  if (!isDebianRoot()) {
    const required = missing.filter((s) => !s.optional);
    if (required.length > 0) throw new BootstrapError(installHint(required));
    process.stdout.write(`    not installed (optional): ${missing.map((s) => s.pkg).join(', ')}\n`);
    return;
  }

  const pkgs = [...new Set(missing.map((s) => s.pkg))];
  process.stdout.write(`    installing ${pkgs.join(' ')} with apt-get\n`);
  // policy-rc.d exit 101 tells the packages' postinst not to start their services: we run our
  // own on our own ports and must not leave redis/influxdb/nginx bound to the default ones.
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy);
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let code = await run('apt-get', ['update'], { env });
    if (code !== 0) throw new BootstrapError(`apt-get update failed with exit code ${code}`);
    code = await run('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env });
    if (code !== 0)
      throw new BootstrapError(`apt-get install ${pkgs.join(' ')} failed with exit code ${code}`);
  } finally {
    if (ownPolicy) rmSync(policy, { force: true });
  }
  const still = missingServers(process.env, { cluster });
  if (still.length > 0)
    throw new BootstrapError(`apt-get finished but still ${installHint(still)}`);
}

/** Fails early on a Node older than the one package.json's engines asks for. */
export function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    throw new BootstrapError(
      `Node ${process.versions.node} is too old: Agent-Reach needs Node >= 20.19`,
    );
  }
}
