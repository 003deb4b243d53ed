import type { Summary } from '../stats.ts';

/** The three ways of loading a system. */
export type Mode = 'flood' | 'paced' | 'http';

/** One run, sent by the orchestrator to a system's caller process. */
export interface RunRequest {
  /** Unique per run; task keys are `<id>-<n>`. */
  id: string;
  mode: Mode;
  /** flood: how many tasks. */
  tasks?: number;
  /** flood: tasks outstanding at once; http: connections (each waits for its result). */
  window?: number;
  /** paced: tasks per second, open loop. */
  rate?: number;
  /** paced and http: how long to keep submitting. */
  durationMs?: number;
  /** Give up waiting for results this long after the last submission. */
  drainTimeoutMs: number;
  /**
   * flood and paced: most tasks in one submission request, for callers that batch and take a
   * limit (the router floor's is held to the router's batches). @default the caller's own
   */
  maxBatch?: number;
}

/** What a caller process measured in one run. */
export interface RunResult {
  id: string;
  mode: Mode;
  submitted: number;
  completed: number;
  failed: number;
  /** Submissions refused for now (503 NO_AGENT) and sent again. */
  retries: number;
  /** Results for a task that already had one. */
  duplicates: number;
  /** First submission to last result. */
  elapsedMs: number;
  /** completed / elapsed. */
  tps: number;
  /** Submit (scheduled time when paced) → the worker starts the task, ms. */
  received: Summary;
  /** Submit → the caller holds the result, ms. */
  done: Summary;
  /** Some tasks had no result within the drain timeout. */
  timedOut: boolean;
  firstError?: string;
  /** What the system said the first time it asked to be asked again. */
  firstRetry?: string;
  /** Submission requests the caller sent during the run, when it counts them (batch callers). */
  requests?: number;
  /**
   * Where submit → held went, hop by hop, ms, when the caller can tell (Agent-Reach's, from the
   * stream entry ids its tasks and results carry): see systems/reach/hops.ts.
   */
  hops?: Record<string, Summary>;
}

/**
 * Orchestrator → caller. `prepare` comes before each run, outside its measured window: the caller
 * sets up or tears down what only some modes use, and answers `prepared`.
 */
export type ToCaller = { type: 'run'; req: RunRequest } | { type: 'prepare'; mode: Mode };

/** Caller → orchestrator. */
export type FromCaller =
  | { type: 'ready' }
  | { type: 'prepared'; mode: Mode; error?: string }
  | { type: 'result'; result: RunResult }
  | { type: 'run-error'; id: string; message: string };
