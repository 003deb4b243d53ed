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
import { connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';

runMain(async () => {
  checkNode();
  banner('[1/5] npm dependencies');
  await ensureNodeModules();
  banner('[2/5] system packages: redis-server, influxd, nginx');
  await ensureSystemPackages();
  // A given Redis that does not answer stops the run here, naming it, not in every test.
  await checkRedisAnswers();
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
  // services would otherwise inherit it and go to the cluster (and REACH_TEST_REDIS would switch
  // every workspace's test kit to a cluster).
  const { REDIS_CLUSTER_NODES: _seeds, REACH_TEST_REDIS: _mode, ...standaloneEnv } = process.env;
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

/** Whether the cluster leg runs when REACH_CLUSTER_LEG is not set (REACH_CLUSTER_LEG=off skips it). */
const CLUSTER_LEG_DEFAULT = 'on';

/**
 * True when the cluster leg runs: REACH_CLUSTER_LEG=on (default: CLUSTER_LEG_DEFAULT), and
 * turbo's arguments do not leave the e2e workspace out (`--filter=@agent-reach/router`).
 * Otherwise the reason it does not.
 */
function clusterLegWanted(extra) {
  const wanted = process.env.REACH_CLUSTER_LEG || CLUSTER_LEG_DEFAULT;
  if (wanted !== 'on') return `REACH_CLUSTER_LEG=${wanted} (on runs it)`;
  // `--filter=x` or `--filter x`: the leg runs when one of them can name the e2e workspace.
  const filters = extra.flatMap((a, i) =>
    a.startsWith('--filter=') ? [a.slice(9)] : a === '--filter' ? [extra[i + 1] ?? ''] : [],
  );
  if (filters.length > 0 && !filters.some((f) => /e2e|\.\.\.|^\.?\/?test/.test(f)))
    return `--filter ${filters.join(' ')} leaves out @agent-reach/e2e`;
  return true;
}

/**
 * Each Redis the run is given (REDIS_URL; REDIS_CLUSTER_NODES when the cluster leg runs) must
 * answer a PING within 10 s (an error reply such as NOAUTH counts); otherwise this throws naming
 * the address.
 */
async function checkRedisAnswers() {
  const targets = [];
  if (process.env.REDIS_URL) {
    const url = new URL(process.env.REDIS_URL);
    targets.push({
      what: `REDIS_URL=${process.env.REDIS_URL.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@')}`,
      host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      port: Number(url.port || 6379),
      tls: url.protocol === 'rediss:',
    });
  }
  if (process.env.REDIS_CLUSTER_NODES && clusterLegWanted(process.argv.slice(2)) === true) {
    const [host, port] = process.env.REDIS_CLUSTER_NODES.split(',')[0]
      .trim()
      .split(/:(?=\d+$)/);
    targets.push({
      what: `REDIS_CLUSTER_NODES=${process.env.REDIS_CLUSTER_NODES}`,
      host: host.replace(/^\[|\]$/g, ''),
      port: Number(port),
      tls: Boolean(process.env.REDIS_TLS_CA),
    });
  }
  for (const t of targets) {
    const deadline = Date.now() + 10_000;
    let last = 'no answer';
    for (;;) {
      const answer = await pingOnce(t, Math.max(200, Math.min(2000, deadline - Date.now())));
      if (answer === true) break;
      last = answer;
      if (Date.now() >= deadline) throw new Error(`${t.what} did not answer within 10 s (${last})`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** true when something at `t` answers PING with a Redis reply, else what went wrong. */
function pingOnce(t, timeoutMs) {
  return new Promise((resolve) => {
    const socket = t.tls
      ? connectTls({ host: t.host, port: t.port, rejectUnauthorized: false })
      : connectTcp({ host: t.host, port: t.port });
    const done = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done('timed out'));
    socket.once(t.tls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^[+-]/.test(data.toString()) ? true : 'not Redis'));
    socket.once('error', (err) => done(err.code ?? err.message));
  });
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
