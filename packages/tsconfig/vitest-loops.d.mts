/** The global setup that starts the services for a run. */
export declare const SERVICES_SETUP: string;

/** The files and global setup of the loop `mode` names, for tests under `src/`. */
export declare function loopFiles(
  mode: string,
  setup?: readonly string[],
): { include: string[]; exclude: string[]; globalSetup: string[] };
