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
  return run(args);
});

function run(args) {
  const child = spawn('npx', args, { stdio: 'inherit', cwd: root });
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
