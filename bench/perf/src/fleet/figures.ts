/**
 * `--modes fleet`'s derived figures, pure: what one agent, one heartbeat, one registration and
 * one status change cost registry-sync, and what a snapshot costs per agent, from the raw
 * readings of a run (`FleetSizeResult`).
 */
import type { SnapshotTraffic } from './snapshot-watch.ts';

/** CPU and memory of a process over one window. */
export interface ProcWindow {
  /** CPU seconds (user + system) used in the window. */
  cpuS: number;
  /** Resident memory at the window's end, MiB. */
  rssMiB: number;
}

/** One measured window of the fleet (idle in a heartbeat mode, or churning). */
export interface FleetWindow {
  seconds: number;
  sync: ProcWindow;
  router: ProcWindow;
  redisCpuS: number;
  /** Heartbeats answered 200 in the window, and the requests that carried them. */
  beats: number;
  beatRequests: number;
  beatsFailed: number;
  beatsLate: number;
  /** Status changes in the fleet event stream. */
  statusChanges: number;
  snapshot: SnapshotTraffic;
}

/** A registration round: the first one (bounded concurrency) or the storm (all at once). */
export interface RegistrationRound {
  agents: number;
  ok: number;
  failed: number;
  seconds: number;
  syncCpuS: number;
  errors: Record<string, number>;
  /** Register calls' answer times: the largest p50, p99 and max over the simulating processes. */
  latencyMs: { p50: number; p99: number; max: number };
}

/** CPU share of one core over a window, as cores (1 = a whole core). */
export function cores(cpuS: number, seconds: number): number {
  return seconds > 0 ? cpuS / seconds : NaN;
}

/** Snapshot bytes routers are sent per second: full writes plus deltas. */
export function snapshotBytesPerS(w: Pick<FleetWindow, 'seconds' | 'snapshot'>): number {
  return w.seconds > 0 ? (w.snapshot.fullBytes + w.snapshot.deltaBytes) / w.seconds : NaN;
}

/** registry-sync CPU-ms per heartbeat answered in an idle window (probes and sweeps included). */
export function syncMsPerBeat(w: FleetWindow): number {
  return w.beats > 0 ? (w.sync.cpuS * 1000) / w.beats : NaN;
}

/**
 * What a heartbeat sent alone costs registry-sync over one sent in a batch, CPU-ms: the two idle
 * windows' difference in cores over the beats per second. Everything else idle (probes, sweeps,
 * snapshots) is the same in both and cancels out.
 */
export function singleOverBatchMsPerBeat(single: FleetWindow, batch: FleetWindow): number {
  const beatsPerS = single.seconds > 0 ? single.beats / single.seconds : 0;
  if (beatsPerS <= 0) return NaN;
  return (
    ((cores(single.sync.cpuS, single.seconds) - cores(batch.sync.cpuS, batch.seconds)) * 1000) /
    beatsPerS
  );
}

/**
 * registry-sync CPU-ms per registration: the round's CPU less the idle cost of the fleet over it,
 * taking the fleet as half registered on average during a first round (whole during a storm).
 */
export function syncMsPerRegistration(
  round: RegistrationRound,
  idleCores: number,
  registeredShare: number,
): number {
  if (round.ok === 0) return NaN;
  const idleS = idleCores * round.seconds * registeredShare;
  return (Math.max(0, round.syncCpuS - idleS) * 1000) / round.ok;
}

/**
 * registry-sync CPU-ms per status change: what the churn window cost above the quiet one of the
 * same heartbeat mode (per second, scaled to the churn's length), over the changes it added.
 */
export function syncMsPerStatusChange(churn: FleetWindow, quiet: FleetWindow): number {
  const extraS = churn.sync.cpuS - cores(quiet.sync.cpuS, quiet.seconds) * churn.seconds;
  const quietRate = quiet.seconds > 0 ? quiet.statusChanges / quiet.seconds : 0;
  const extraChanges = churn.statusChanges - quietRate * churn.seconds;
  // Below zero the churn cost less than the quiet fleet (its flapping agents beat less often):
  // the changes' cost is within what the two windows can tell apart.
  return extraChanges > 0 && extraS > 0 ? (extraS * 1000) / extraChanges : NaN;
}

/** Bytes per agent in a full snapshot. */
export function snapshotBytesPerAgent(fullBytes: number, agents: number): number {
  return agents > 0 && fullBytes > 0 ? fullBytes / agents : NaN;
}

/**
 * Whether a window kept up: every beat answered and at most 1 % of them late. A size whose idle
 * window did not is reported and the larger sizes are not run.
 */
export function keptUp(w: FleetWindow): boolean {
  const sent = w.beats + w.beatsFailed;
  return sent > 0 && w.beatsFailed === 0 && w.beatsLate <= 0.01 * sent;
}
