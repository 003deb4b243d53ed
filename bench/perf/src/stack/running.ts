import { fileURLToPath } from 'node:url';
import type { Child } from '../proc/children.ts';
import type { SystemName } from '../options.ts';

/** A system's processes, up and ready for runs. */
export interface RunningSystem {
  name: SystemName;
  /** The process the orchestrator sends runs to. */
  caller: Child;
  /** Every process of the system, the caller included (CPU is read for each). */
  processes: Child[];
  /** Processes that serve only the http mode (gateways): their CPU counts only there. */
  httpOnly: Child[];
  /** Tidies up between runs, outside the measured window (e.g. trims streams). */
  betweenRuns(): Promise<void>;
  /**
   * Resolves once the system is ready for a run again after its processes were woken from a
   * pause (SIGSTOP while another system ran); outside the measured window.
   */
  awake(): Promise<void>;
}

/** Entry files of the bench children, from this folder. */
export const entry = (path: string): string =>
  fileURLToPath(new URL(`../systems/${path}`, import.meta.url));
