import { fileURLToPath } from 'node:url';
import type { Child, Role } from '../proc/children.ts';
import type { GcTrace } from '../proc/gc-trace.ts';
import type { RedisGauge } from '../proc/redis-nodes.ts';
import type { SystemName } from '../options.ts';
import type { EndpointFacts } from './relay.ts';

/** A process whose CPU counts for a system but which the bench does not start as a Node child (nginx). */
export interface ProcRef {
  name: string;
  role: Role;
  pid: number;
}

/** A system's processes, up and ready for runs. */
export interface RunningSystem {
  name: SystemName;
  /** The process the orchestrator sends runs to. */
  caller: Child;
  /** Every process of the system, the caller included (CPU is read for each). */
  processes: Child[];
  /** Processes that serve only the http mode (gateways): their CPU counts only there. */
  httpOnly: Child[];
  /** Other processes whose CPU counts in every run (nginx in front of several routers); never paused. */
  cpuOnly?: ProcRef[];
  /** A system of endpoint agents: its relay, its endpoint server and what their start measured. */
  endpointFacts?: EndpointFacts;
  /** The Redis servers this system runs on, when not the session's one Redis. */
  redis?: RedisGauge;
  /** `--trace-gc`: the router's collections; each run's record gets those of its window. */
  gc?: GcTrace;
  /**
   * Agent-Reach: submissions its routers have put in a waiting room so far (room-entries.ts),
   * undefined when a router does not answer; each run's record gets those of its window.
   */
  roomEntries?: () => Promise<number | undefined>;
  /**
   * Send this system's runs no more tasks per submission request than the named system's caller
   * has sent on average so far (its warm-up included), so that both spread the per-request cost
   * over as many tasks (the router floor of `--modes router-only`, held to the router's).
   */
  batchLike?: SystemName;
  /** Stops what the system started besides its Node children (nginx); idempotent. */
  stop?: () => Promise<void>;
  /** SIGKILLs what {@link stop} would stop, when the orchestrator must exit at once. */
  killNow?: () => void;
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
