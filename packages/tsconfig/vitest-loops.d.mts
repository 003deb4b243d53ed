/** The global setup that starts the services for a run. */
export declare const SERVICES_SETUP: string;

/** Vitest's reporter setting for one run: `reporters` (see vitest-loops.mjs). */
type Reporters = (string | [string, Record<string, unknown>])[];

/**
 * The reporters of a run named `run`: the default one, and with REACH_TEST_RESULTS set also a
 * JSON report in `<REACH_TEST_RESULTS>/<run>.json`.
 */
export declare function testReporters(run: string): { reporters: Reporters };

/** The files and global setup of the loop `mode` names, for tests under `src/`. */
export declare function loopFiles(
  mode: string,
  setup?: readonly string[],
): { include: string[]; exclude: string[]; globalSetup: string[]; reporters: Reporters };
