// `npm run soak`: install what is missing, then run the long versions of the soak tests: every
// registry-sync instance stopped for 2 minutes under a steady load
// (test/e2e/control-plane-outage.test.ts, 40 s in `npm test`). REACH_OUTAGE_S sets the outage.
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
  const outage = process.env.REACH_OUTAGE_S || '120';
  banner(`[3/3] soak: every registry-sync away for ${outage} s under load`);
  return run('npx', ['vitest', 'run', 'e2e/control-plane-outage', ...process.argv.slice(2)], {
    cwd: new URL('../../test/', import.meta.url).pathname,
    env: { ...process.env, REACH_OUTAGE_S: outage },
  });
});
