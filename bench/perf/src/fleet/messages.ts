/**
 * Messages between `--modes fleet`'s orchestrator and its simulated-agent processes
 * (`sim-agents.ts`), over the IPC channel.
 */

/** How heartbeats go out: one `POST /v1/agents/:id/heartbeat` each, or 1–1000 in one request. */
export type BeatMode = 'single' | 'batch';

/** The capability every simulated agent serves (the paced submit load's). */
export const FLEET_CAPABILITY = 'fleet-all';

/** Beats in one `POST /v1/agents/heartbeats` at most (docs/PROTOCOL.md §2). */
export const MAX_BEATS_PER_REQUEST = 1000;

/** Orchestrator → child. */
export type FleetCommand =
  /**
   * Register every agent of the child as instance generation `generation` (a new instance_id:
   * the epoch rises, as after a restart), `concurrency` registrations at once (0: all at once).
   */
  | { type: 'register'; generation: number; concurrency: number }
  /** Heartbeat in `mode`; the first `flapShare` of the agents every `flapIntervalMs`. */
  | { type: 'beats'; mode: BeatMode; flapShare: number; flapIntervalMs: number }
  /** Answer with the counters so far. */
  | { type: 'counts' };

/** Counters a child keeps from its start. */
export interface SimCounts {
  /** Heartbeats answered 200 (each beat of a batch counts). */
  beats: number;
  /** Heartbeats refused or failed (a batch's refused beats, failed requests' beats). */
  beatsFailed: number;
  /** HTTP requests that carried heartbeats. */
  beatRequests: number;
  /** Beats sent later than 1.2× their interval after the one before (the child fell behind). */
  beatsLate: number;
  /** Inbox entries answered: probes, and tasks. */
  probesAnswered: number;
  tasksAnswered: number;
  /** Agents that got at least one task (how widely the router spreads them). */
  taskAgents: number;
}

/** Child → orchestrator. */
export type FleetReply =
  | { type: 'ready'; agents: number }
  | {
      type: 'registered';
      generation: number;
      ok: number;
      failed: number;
      /** First failures, as `status code` or error name, with their counts. */
      errors: Record<string, number>;
      ms: number;
      /** Each register call's answer time in this child. */
      latencyMs: { p50: number; p99: number; max: number };
    }
  | ({ type: 'counts' } & SimCounts);
