// The test loops a workspace's vitest config serves (docs/OPERATIONS.md, "Test loops"), chosen by
// vitest's `--mode`:
//
// - `unit` (`npm run test:unit`): the `*.test.ts` files that are not `*.int.test.ts`, with no
//   global setup: no Redis, InfluxDB or nginx is started, and none needs to exist;
// - `int` (`npm run test:int`): the `*.int.test.ts` files, with the global setup that starts the
//   services (or finds them through REDIS_URL and INFLUX_URL);
// - anything else (plain `vitest run`): every file, with the global setup.
//
// A file that needs a service is named `.int.test.ts`; a unit file that reaches for one fails,
// since `testServices()` then has nothing to give it. Plain JavaScript: every workspace's config
// loads it, before anything is built.
import { configDefaults } from 'vitest/config';
import { basename, join } from 'node:path';

/** The global setup that starts the services for a run. */
export const SERVICES_SETUP = '@agent-reach/testkit/global-setup';

/**
 * The reporters of a run named `run`: the default one, and with REACH_TEST_RESULTS set (a
 * directory; `npm test` sets it) also vitest's JSON report in `<dir>/<run>.json`, from which
 * `npm test` lists the failed tests at its end.
 */
export function testReporters(run) {
  const dir = process.env.REACH_TEST_RESULTS;
  if (!dir) return { reporters: ['default'] };
  const outputFile = join(dir, `${run.replace(/[^\w.-]+/g, '_')}.json`);
  return { reporters: ['default', ['json', { outputFile }]] };
}

/** The files and global setup of the loop `mode` names, for tests under `src/`. */
export function loopFiles(mode, setup = [SERVICES_SETUP]) {
  const all = 'src/**/*.test.ts';
  const int = 'src/**/*.int.test.ts';
  const exclude = [...configDefaults.exclude];
  const reporters = testReporters(`${basename(process.cwd())}-${mode || 'all'}`).reporters;
  // Unit files share their workers' module graph (isolate: false) and run in threads: on this
  // machine's two cores that takes the loop from about 70 s to about 32 s; each file still gets
  // fresh test state, and none of them changes a module's state for another.
  if (mode === 'unit')
    return {
      include: [all],
      exclude: [...exclude, int],
      globalSetup: [],
      pool: 'threads',
      isolate: false,
      reporters,
    };
  if (mode === 'int') return { include: [int], exclude, globalSetup: [...setup], reporters };
  return { include: [all], exclude, globalSetup: [...setup], reporters };
}
