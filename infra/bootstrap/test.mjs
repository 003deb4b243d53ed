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
import { makeResultsDir, recapFailures, removeResultsDir } from './test-recap.mjs';
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
  // REDIS_CLUSTER_NODES names the cluster for the cluster leg only; the standalone parts'
  // services would otherwise inherit it and go to the cluster (and REACH_TEST_REDIS would switch
  // every workspace's test kit to a cluster).
  const { REDIS_CLUSTER_NODES: _seeds, REACH_TEST_REDIS: _mode, ...standaloneEnv } = process.env;
  // Every vitest run writes its JSON report here; the failed tests are listed at the end.
  const results = makeResultsDir();
  standaloneEnv.REACH_TEST_RESULTS = results;
  // The parts, timed each (docs/OPERATIONS.md, "Test loops"). Unit files need no service: both
  // cores, and turbo's cache skips a workspace whose files did not change. The rest start
  // servers: concurrency 1 on two cores, and --continue so one failure does not hide another.
  const parts = [
    {
      name: 'unit',
      args: ['turbo', 'run', 'test:unit', '--concurrency=2', '--continue', ...extra],
    },
    {
      name: 'integration',
      args: ['turbo', 'run', 'test:int', '--concurrency=1', '--continue', ...extra],
    },
    {
      name: 'e2e',
      command: 'npm',
      args: ['run', 'test', '-w', '@agent-reach/e2e'],
      skip: e2eFiltered(extra),
    },
  ];
  const times = [];
  let failed = 0;
  for (const part of parts) {
    if (part.skip) {
      times.push(`${part.name} skipped (${part.skip})`);
      continue;
    }
    const command = part.command ?? 'npx';
    banner(`[5/5] ${part.name}: ${command} ${part.args.join(' ')}`);
    const started = Date.now();
    const code = await run(part.args, { command, env: standaloneEnv });
    times.push(`${part.name} ${seconds(started)} s (${code === 0 ? 'passed' : 'failed'})`);
    if (code !== 0 && failed === 0) failed = code;
  }
  const leg = clusterLegWanted(extra);
  if (leg !== true) {
    times.push(`cluster leg skipped: ${leg}`);
  } else {
    // The cluster leg: the core end-to-end files (test/cluster-leg.ts) on one Redis Cluster.
    banner('[5/5] cluster leg: npm run test:cluster -w @agent-reach/e2e (on a Redis Cluster)');
    const started = Date.now();
    const clustered = await run(['run', 'test:cluster', '-w', '@agent-reach/e2e'], {
      command: 'npm',
      env: { ...process.env, REACH_TEST_REDIS: 'cluster', REACH_TEST_RESULTS: results },
    });
    times.push(`cluster leg ${seconds(started)} s (${clustered === 0 ? 'passed' : 'failed'})`);
    if (clustered !== 0 && failed === 0) failed = clustered;
  }
  const recap = recapFailures(results, root);
  removeResultsDir(results);
  if (recap) process.stdout.write(`\nfailed tests:\n${recap}\n`);
  else if (failed !== 0) process.stdout.write('\nno report named a failed test: see above\n');
  process.stdout.write(`\ntest parts: ${times.join(', ')}\n`);
  return failed;
});

/** Whole seconds since `started` (ms). */
function seconds(started) {
  return ((Date.now() - started) / 1000).toFixed(0);
}

/** Why the e2e part does not run (turbo's --filter leaves its workspace out), or undefined. */
function e2eFiltered(extra) {
  const filters = filtersOf(extra);
  if (filters.length > 0 && !filters.some(namesE2e))
    return `--filter ${filters.join(' ')} leaves out @agent-reach/e2e`;
  return undefined;
}

/** The values of turbo's `--filter=x` and `--filter x` arguments. */
function filtersOf(extra) {
  return extra.flatMap((a, i) =>
    a.startsWith('--filter=') ? [a.slice(9)] : a === '--filter' ? [extra[i + 1] ?? ''] : [],
  );
}

/** True when a turbo filter can name the e2e workspace. */
function namesE2e(filter) {
  return /e2e|\.\.\.|^\.?\/?test/.test(filter);
}

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
  const filtered = e2eFiltered(extra);
  return filtered ?? true;
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
