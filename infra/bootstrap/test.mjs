// `npm test`: install what is missing, then type-check, lint, build and test every workspace.
// Extra arguments go to turbo, e.g. `npm test -- --filter=@agent-reach/router`.
import {
  banner,
  checkNode,
  ensureNodeModules,
  ensureSystemPackages,
  root,
  runMain,
} from './ensure.mjs';
import { spawn } from 'node:child_process';

runMain(async () => {
  checkNode();
  banner('[1/5] npm dependencies');
  await ensureNodeModules();
  banner('[2/5] system packages: redis-server, influxd, nginx');
  await ensureSystemPackages();
  const extra = process.argv.slice(2);
  // Checks first, on both cores; a failure stops here with the compiler's or linter's words.
  const checks = ['turbo', 'run', 'typecheck', 'lint', '--concurrency=2', ...extra];
  banner(`[3/5] npx ${checks.join(' ')}`);
  const checked = await run(checks);
  if (checked !== 0) return checked;
  // Formatting is checked, not fixed: `npm run format` fixes it.
  const formatted = await run(['prettier', '--check', '--log-level=warn', '.']);
  if (formatted !== 0) return formatted;
  // The build ships (services run from dist in production, the packed SDK is tested), so it
  // must pass too; turbo's cache makes it quick when nothing changed.
  const build = ['turbo', 'run', 'build', '--concurrency=2', '--output-logs=errors-only', ...extra];
  banner(`[4/5] npx ${build.join(' ')}`);
  const built = await run(build);
  if (built !== 0) return built;
  // Concurrency 1: two cores, and test files that start servers must not fight over them.
  // --continue: every workspace's tests run, so one failure does not hide another.
  const args = ['turbo', 'run', 'test', '--concurrency=1', '--continue', ...extra];
  banner(`[5/5] npx ${args.join(' ')}`);
  // REDIS_CLUSTER_NODES names the cluster for the cluster leg only; the standalone leg's
  // services would otherwise inherit it and go to the cluster.
  const { REDIS_CLUSTER_NODES: _seeds, ...standaloneEnv } = process.env;
  const standaloneStarted = Date.now();
  const tested = await run(args, { env: standaloneEnv });
  const standaloneS = (Date.now() - standaloneStarted) / 1000;
  const leg = clusterLegWanted(extra);
  if (leg !== true) {
    process.stdout.write(`\ncluster leg skipped: ${leg}\n`);
    return tested;
  }
  // The cluster leg: the core end-to-end files (test/cluster-leg.ts) on one Redis Cluster.
  banner('[5/5] second leg: npm run test:cluster -w @agent-reach/e2e (on a Redis Cluster)');
  const clusterStarted = Date.now();
  const clustered = await run(['run', 'test:cluster', '-w', '@agent-reach/e2e'], {
    command: 'npm',
    env: { ...process.env, REACH_TEST_REDIS: 'cluster' },
  });
  const clusterS = (Date.now() - clusterStarted) / 1000;
  process.stdout.write(
    `\ntest legs: standalone ${standaloneS.toFixed(0)} s (${tested === 0 ? 'passed' : 'failed'}), ` +
      `cluster ${clusterS.toFixed(0)} s (${clustered === 0 ? 'passed' : 'failed'}): the cluster leg ` +
      `adds ${((100 * clusterS) / Math.max(1, standaloneS)).toFixed(0)} % to the test step\n`,
  );
  return tested !== 0 ? tested : clustered;
});

/** Whether the cluster leg runs when REACH_CLUSTER_LEG is not set. */
const CLUSTER_LEG_DEFAULT = 'off';

/**
 * True when the cluster leg runs: REACH_CLUSTER_LEG=on (default: CLUSTER_LEG_DEFAULT), and
 * turbo's arguments do not leave the e2e workspace out (`--filter=@agent-reach/router`).
 * Otherwise the reason it does not.
 */
function clusterLegWanted(extra) {
  const wanted = process.env.REACH_CLUSTER_LEG || CLUSTER_LEG_DEFAULT;
  if (wanted !== 'on') return `REACH_CLUSTER_LEG=${wanted} (on runs it)`;
  const filters = extra.filter((a) => a.startsWith('--filter'));
  if (filters.length > 0 && !filters.some((f) => /e2e|\.\.\.|^--filter=?\.?\/?test/.test(f)))
    return `${filters.join(' ')} leaves out @agent-reach/e2e`;
  return true;
}

function run(args, opts = {}) {
  const child = spawn(opts.command ?? 'npx', args, {
    stdio: 'inherit',
    cwd: root,
    env: opts.env ?? process.env,
  });
  // The terminal's Ctrl-C reaches turbo directly (same process group), so SIGINT is only kept
  // from ending us before turbo; a SIGTERM sent to us alone is passed on.
  process.removeAllListeners('SIGINT').removeAllListeners('SIGTERM');
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 1)));
  });
}
