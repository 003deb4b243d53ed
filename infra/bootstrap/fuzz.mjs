// `npm run fuzz`: install what is missing, then fuzz every HTTP endpoint of both services with
// 10,000 requests each per leg (open, then keys required). REACH_FUZZ_COUNT, REACH_FUZZ_SEED,
// REACH_FUZZ_CONCURRENCY and REACH_FUZZ_ONLY are read by the suite (test/support/fuzz/settings.ts).
import {
  banner,
  checkNode,
  ensureNodeModules,
  ensureSystemPackages,
  run,
  runMain,
} from './ensure.mjs';

runMain(async () => {
  checkNode();
  banner('[1/3] npm dependencies');
  await ensureNodeModules();
  banner('[2/3] system packages: redis-server, influxd, nginx');
  await ensureSystemPackages();
  const count = process.env.REACH_FUZZ_COUNT || '10000';
  banner(`[3/3] HTTP fuzz: ${count} requests per endpoint and leg`);
  return run('npx', ['vitest', 'run', 'e2e/fuzz-http', ...process.argv.slice(2)], {
    cwd: new URL('../../test/', import.meta.url).pathname,
    env: { ...process.env, REACH_FUZZ_COUNT: count },
  });
});
