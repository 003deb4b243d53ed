// `npm start`: install what is missing, then run Redis, InfluxDB, registry-sync, the router and
// three echo agents until Ctrl-C. The launcher itself is TypeScript in @agent-reach/testkit,
// shared with the test helpers, loaded through tsx once node_modules exists.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import {
  banner,
  checkNode,
  ensureNodeModules,
  ensureSystemPackages,
  root,
  runMain,
} from './ensure.mjs';

runMain(async () => {
  checkNode();
  banner('[1/3] npm dependencies');
  await ensureNodeModules();
  banner('[2/3] system packages: redis-server, influxd, nginx');
  await ensureSystemPackages();
  banner('[3/3] starting Redis, InfluxDB, registry-sync, router and three echo agents');
  const { register } = await import('tsx/esm/api');
  register();
  const launcher = pathToFileURL(join(root, 'packages/testkit/src/launch-stack.ts')).href;
  const { launchStack } = await import(launcher);
  return launchStack(root);
});
