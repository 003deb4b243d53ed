/** `--modes fleet`'s table, derived figures and JSON line, from each size's results. */
import { round } from '../stats.ts';
import {
  cores,
  keptUp,
  singleOverBatchMsPerBeat,
  snapshotBytesPerAgent,
  snapshotBytesPerS,
  syncMsPerBeat,
  syncMsPerRegistration,
  syncMsPerStatusChange,
  type FleetWindow,
  type RegistrationRound,
} from './figures.ts';
import type { FleetSizeResult } from './size-run.ts';

const f = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
const kib = (bytes: number) => f(bytes / 1024, 1);

function windowCells(w: FleetWindow): string[] {
  return [
    `${f(cores(w.sync.cpuS, w.seconds), 3)} / ${f(w.sync.rssMiB, 0)}`,
    `${f(cores(w.router.cpuS, w.seconds), 3)} / ${f(w.router.rssMiB, 0)}`,
    f(cores(w.redisCpuS, w.seconds), 3),
    kib(snapshotBytesPerS(w)),
    `${w.snapshot.fullWrites}+${w.snapshot.deltas}`,
    String(w.statusChanges),
    `${w.beats}/${w.beatRequests}${w.beatsFailed + w.beatsLate > 0 ? ` (${w.beatsFailed} failed, ${w.beatsLate} late)` : ''}`,
  ];
}

/** The table rows of every size, as printable lines. */
export function fleetTable(results: readonly FleetSizeResult[]): string[] {
  const head = [
    'agents',
    'window',
    'sync cores / MiB',
    'router cores / MiB',
    'redis cores',
    'snapshot KiB/s',
    'full+deltas',
    'status chg',
    'beats/requests',
  ];
  const rows: string[][] = [head];
  for (const r of results) {
    const n = r.agents.toLocaleString('en-US');
    rows.push([n, 'idle, single beats', ...windowCells(r.single)]);
    rows.push([n, 'idle, batched beats', ...windowCells(r.batch)]);
    rows.push([n, 'churn 10 % (batched)', ...windowCells(r.churn)]);
  }
  const widths = head.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) =>
    row.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  '),
  );
}

function passLine(r: FleetSizeResult): string {
  const { beforeStorm, afterStorm } = r.worstPassS;
  if (afterStorm === undefined) return 'registry-sync exposes no pass duration';
  return `longest pass ${f((beforeStorm ?? NaN) * 1000, 0)} ms before the storm, ${f(afterStorm * 1000, 0)} ms with it`;
}

/** Per size: registration, latency, storm and churn lines. */
export function fleetEvents(r: FleetSizeResult): string[] {
  const reg = r.registration;
  const storm = r.storm;
  const errs = (e: Record<string, number>) =>
    Object.keys(e).length === 0
      ? ''
      : ` (${Object.entries(e)
          .map(([k, v]) => `${k} × ${v}`)
          .join(', ')})`;
  const calls = (l: RegistrationRound['latencyMs']) =>
    `calls p50 ${f(l.p50, 0)} ms, p99 ${f(l.p99, 0)} ms, max ${f(l.max, 0)} ms`;
  const routable = r.routable
    ? `${f(r.routable.routableMs, 0)} ms (register call ${f(r.routable.registerMs, 0)} ms, ${r.routable.refusedSubmits} submits refused first)`
    : 'not measured';
  const outcomes = Object.entries(r.paced.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `${r.agents.toLocaleString('en-US')} agents (${r.processes} simulating process(es)):`,
    `  registration, 64 at once: ${reg.ok}/${reg.agents} in ${f(reg.seconds, 1)} s = ${f(reg.ok / reg.seconds, 0)}/s${errs(reg.errors)} (${calls(reg.latencyMs)}); every agent HEALTHY ${f(r.healthyS, 1)} s after the first call`,
    `  paced submits ${r.paced.rate}/s × ${r.paced.seconds} s: p50 ${f(r.paced.latency.p50, 2)} ms, p99 ${f(r.paced.latency.p99, 2)} ms from each task's scheduled moment; p50 ${f(r.paced.fromSend.p50, 2)}, p99 ${f(r.paced.fromSend.p99, 2)} from the request going out (${outcomes}); ${r.paced.answered ?? '?'} answered by ${r.paced.agents ?? '?'} distinct agents`,
    `  new agent, capability of its own: routable ${routable}`,
    `  storm (every agent registers again at once, new instances): ${storm.ok}/${storm.agents} answered in ${f(storm.seconds, 1)} s${errs(storm.errors)} (${calls(storm.latencyMs)}); afterwards ${r.stormHealthy} HEALTHY: ${r.agents - r.stormHealthy} lost`,
    `  housekeeping: ${passLine(r)}; ${r.housekeepingWarnings} "could not run" warning(s)${r.housekeepingWarnings > 0 ? `, worst gap ${r.housekeepingGapMs} ms` : ''}, ${r.passesFailed} pass(es) failed`,
    `  churn: registry-sync peak resident memory (VmHWM) ${f(r.syncPeakMiB, 0)} MiB; ${r.churn.statusChanges} status changes in ${f(r.churn.seconds, 0)} s against ${r.batch.statusChanges} in the quiet batched window`,
    `  heartbeats kept up (none failed, ≤ 1 % late): single ${keptUp(r.single) ? 'yes' : 'NO'}, batched ${keptUp(r.batch) ? 'yes' : 'NO'}, churn ${keptUp(r.churn) ? 'yes' : 'NO'}`,
    ...r.notes.map((n) => `  note: ${n}`),
  ];
}

/** The derived sizing figures of one size. */
export function fleetCosts(r: FleetSizeResult) {
  const idleCores = cores(r.batch.sync.cpuS, r.batch.seconds);
  return {
    msPerBeatSingle: syncMsPerBeat(r.single),
    msPerBeatBatch: syncMsPerBeat(r.batch),
    singleOverBatchMs: singleOverBatchMsPerBeat(r.single, r.batch),
    msPerRegistration: syncMsPerRegistration(r.registration, idleCores, 0.5),
    msPerStormRegistration: syncMsPerRegistration(r.storm, idleCores, 1),
    msPerStatusChange: syncMsPerStatusChange(r.churn, r.batch),
    snapshotBytesPerAgent: snapshotBytesPerAgent(r.batch.snapshot.lastFullBytes, r.agents),
    syncIdleCpuMsPerAgentPerS: (idleCores * 1000) / r.agents,
  };
}

export function costLines(r: FleetSizeResult): string[] {
  const c = fleetCosts(r);
  return [
    `  ${r.agents.toLocaleString('en-US')} agents: registry-sync CPU-ms per instance renewed (heartbeat) ${f(c.msPerBeatSingle, 3)} single, ${f(c.msPerBeatBatch, 3)} batched` +
      ` (idle window ÷ beats: probes and sweeps included; a single request costs ${f(c.singleOverBatchMs, 3)} more than a batched beat); per registration ${f(c.msPerRegistration, 2)} (storm ${f(c.msPerStormRegistration, 2)});` +
      ` per status change ${Number.isFinite(c.msPerStatusChange) ? f(c.msPerStatusChange, 2) : 'not measurable (churn cost no more than the quiet fleet)'}; idle ${f(c.syncIdleCpuMsPerAgentPerS, 4)} CPU-ms/s per agent (batched);` +
      ` ${f(c.snapshotBytesPerAgent, 0)} bytes per agent in a full snapshot`,
  ];
}

/** The JSON line's keys for every size, `<key>_<agents>`. */
export function fleetJson(results: readonly FleetSizeResult[]): Record<string, number> {
  const json: Record<string, number> = {};
  for (const r of results) {
    const c = fleetCosts(r);
    const n = r.agents;
    Object.assign(json, {
      [`fleet_sync_idle_cores_single_${n}`]: round(cores(r.single.sync.cpuS, r.single.seconds)),
      [`fleet_sync_idle_cores_batch_${n}`]: round(cores(r.batch.sync.cpuS, r.batch.seconds)),
      [`fleet_sync_rss_mib_${n}`]: round(r.batch.sync.rssMiB),
      [`fleet_router_idle_cores_${n}`]: round(cores(r.batch.router.cpuS, r.batch.seconds)),
      [`fleet_router_rss_mib_${n}`]: round(r.batch.router.rssMiB),
      [`fleet_snapshot_bytes_per_s_${n}`]: round(snapshotBytesPerS(r.batch)),
      [`fleet_churn_snapshot_bytes_per_s_${n}`]: round(snapshotBytesPerS(r.churn)),
      [`fleet_churn_sync_cores_${n}`]: round(cores(r.churn.sync.cpuS, r.churn.seconds)),
      [`fleet_churn_sync_peak_mib_${n}`]: round(r.syncPeakMiB),
      [`fleet_churn_status_changes_${n}`]: r.churn.statusChanges,
      [`fleet_submit_p50_ms_${n}`]: round(r.paced.latency.p50),
      [`fleet_submit_p99_ms_${n}`]: round(r.paced.latency.p99),
      [`fleet_submit_sent_p99_ms_${n}`]: round(r.paced.fromSend.p99),
      [`fleet_routable_ms_${n}`]: round(r.routable?.routableMs ?? NaN),
      [`fleet_registrations_per_s_${n}`]: round(r.registration.ok / r.registration.seconds),
      [`fleet_storm_lost_${n}`]: r.agents - r.stormHealthy,
      [`fleet_storm_worst_pass_ms_${n}`]: round((r.worstPassS.afterStorm ?? NaN) * 1000),
      [`fleet_sync_ms_per_beat_single_${n}`]: round(c.msPerBeatSingle),
      [`fleet_sync_ms_per_beat_batch_${n}`]: round(c.msPerBeatBatch),
      [`fleet_sync_single_over_batch_ms_per_beat_${n}`]: round(c.singleOverBatchMs),
      [`fleet_sync_ms_per_registration_${n}`]: round(c.msPerRegistration),
      [`fleet_sync_ms_per_status_change_${n}`]: round(c.msPerStatusChange),
      [`fleet_snapshot_bytes_per_agent_${n}`]: round(c.snapshotBytesPerAgent),
    });
  }
  return json;
}
