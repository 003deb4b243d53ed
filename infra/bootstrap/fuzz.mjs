// `npm run fuzz`: install what is missing, then run every fuzz suite (test/e2e/fuzz-*.test.ts):
// each HTTP endpoint with 10,000 requests per leg (open, then keys required), each protocol-edge
// method (A2A and MCP JSON-RPC, `reach mcp`, Last-Event-ID, registration cards) with 2,000 and
// each one that takes a task id with 10,000, and 1,000 batches of hostile stream entries.
// REACH_FUZZ_COUNT, REACH_FUZZ_RPC_COUNT, REACH_FUZZ_ID_COUNT, REACH_FUZZ_SEED,
// REACH_FUZZ_CONCURRENCY and REACH_FUZZ_ONLY are read by the suite
// (test/support/fuzz/settings.ts).
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
  const rpcCount = process.env.REACH_FUZZ_RPC_COUNT || '2000';
  banner(
    `[3/3] fuzz: ${count} requests per HTTP endpoint and ${rpcCount} per protocol-edge method ` +
      `(five times as many for those taking a task id), per leg`,
  );
  return run('npx', ['vitest', 'run', 'e2e/fuzz-', ...process.argv.slice(2)], {
    cwd: new URL('../../test/', import.meta.url).pathname,
    env: { ...process.env, REACH_FUZZ_COUNT: count, REACH_FUZZ_RPC_COUNT: rpcCount },
  });
});
