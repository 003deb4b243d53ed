import { round } from '../stats.ts';
import type { BullmqRun } from './bullmq-run.ts';
import type { CpuFigures } from './cpu-probe.ts';
import { busyVerdict, jainVerdict, noisyVerdict, type WaitFigures } from './figures.ts';
import type { BRun, JainRun, RoomTenant } from './reach-runs.ts';
import { slotsOf, type FairnessSettings } from './settings.ts';

/** Everything one `--modes fairness` session measured. */
export interface FairnessResults {
  alone: BRun;
  noisy: BRun;
  jain: JainRun;
  bullmq: BullmqRun;
}

const pct = (share: number) => `${round(100 * share)} %`;

/** `router 93 %, redis 20 %, bench 15 %; bench event-loop delay p99 3.1 ms`. */
export function cpuLine(cpu: CpuFigures): string {
  const shares = Object.entries(cpu.pctOfCore).map(([name, p]) => `${name} ${Math.round(p)} %`);
  return `${shares.join(', ')} of a core; bench event-loop delay p99 ${round(cpu.loopDelayP99Ms)} ms`;
}
const num = (n: number) => n.toLocaleString('en-US');

/** `p50 3.1 ms, p99 ≥ 9.8 ms (200 tasks, 198 received)`. */
export function waitLine(w: WaitFigures): string {
  const ge = w.lowerBound ? '≥ ' : '';
  return `p50 ${ge}${round(w.p50)} ms, p99 ${ge}${round(w.p99)} ms (${num(w.submitted)} tasks submitted in the window, ${num(w.received)} received)`;
}

function roomLine(t: RoomTenant | undefined, name: string): string {
  return t
    ? `${name}: ${num(t.queued)} waiting, ${num(t.sent)} sent, wait p50 ${round(t.wait_p50_ms)} ms, p99 ${round(t.wait_p99_ms)} ms, share ${round(t.share)}`
    : `${name}: no row`;
}

/** The settings line. */
export function settingsLine(s: FairnessSettings): string {
  const slots = slotsOf(s);
  const flood = s.bRatePerS * s.floodFactor;
  return (
    `settings: S = ${s.agents} agents × max_concurrency ${s.slotsPerAgent} = ${slots} slots; D = ${s.taskMs} ms ` +
    `(capacity ${round((1000 * slots) / s.taskMs)} tasks/s, slot turnover D/S ${round(s.taskMs / slots)} ms); ` +
    `B ${s.bRatePerS} tasks/s one by one; A ${num(flood)} tasks/s attempted in batches every ${s.tickMs} ms over ${num(s.floodKeys)} fairness keys; ` +
    `warm-up ${s.warmupMs / 1000} s, window ${s.windowMs / 1000} s; Jain: ${s.jainTenants} tenants × ${round(flood / s.jainTenants)} tasks/s, window ${s.jainWindowMs / 1000} s`
  );
}

/** The report's lines after the header, and the JSON line's object. */
export function fairnessReport(
  r: FairnessResults,
  s: FairnessSettings,
): { lines: string[]; json: Record<string, number | boolean> } {
  const slots = slotsOf(s);
  const noisy = noisyVerdict(r.noisy.b, r.alone.b, s.taskMs, slots);
  const jain = jainVerdict(r.jain.served);
  const busy = busyVerdict(
    r.noisy.busy,
    `the noisy-neighbour window; ${pct(r.jain.busy)} in the Jain window`,
  );
  const flood = r.noisy.flood;
  const lines = [
    "B's wait, submit → an agent holds the task:",
    `  B alone (Agent-Reach)          ${waitLine(r.alone.b)}`,
    `  B beside A (Agent-Reach)       ${waitLine(r.noisy.b)}`,
    `  B beside A (BullMQ, one FIFO)  ${waitLine(r.bullmq.b)}`,
    '',
    `B's submit → the router's answer: alone p50 ${round(r.alone.answer.p50)} ms, p99 ${round(r.alone.answer.p99)} ms; beside A p50 ${round(r.noisy.answer.p50)} ms, p99 ${round(r.noisy.answer.p99)} ms`,
    `A's flood on Agent-Reach: ${num(flood?.sent ?? 0)} tasks sent (${flood?.describe() ?? '–'}); ${num(r.noisy.floodSkipped)} ticks skipped with two batches unanswered`,
    `A's flood on BullMQ: ${num(r.bullmq.floodAdded)} jobs added (held to ${num(s.bullmqBacklog)} waiting); ${num(r.bullmq.waitingAtEnd)} jobs waiting at the end; slots busy ${pct(r.bullmq.busy)}`,
    `task starts within 2 ms of the one before, beside A: ${pct(r.noisy.clumped)} (evenly spread slot turnovers would be ${round(s.taskMs / slots)} ms apart)`,
    'the room at the end of the noisy window (GET /v1/queues):',
    `  ${roomLine(
      r.noisy.room.find((t) => t.tenant === 'tenant-a'),
      'A',
    )}`,
    `  ${roomLine(
      r.noisy.room.find((t) => t.tenant === 'tenant-b'),
      'B',
    )}`,
    'CPU in the windows (the bench process runs the clients and the agents):',
    `  B alone (Agent-Reach)     ${cpuLine(r.alone.cpu)}`,
    `  B beside A (Agent-Reach)  ${cpuLine(r.noisy.cpu)}`,
    `  Jain run (Agent-Reach)    ${cpuLine(r.jain.cpu)}`,
    `  B beside A (BullMQ)       ${cpuLine(r.bullmq.cpu)}`,
    `Jain run: served per tenant in the window ${r.jain.served.join(', ')}; tenants backlogged at the window's start ${r.jain.backloggedAtStart}/${r.jain.tenants.length}, at its end ${r.jain.backloggedAtEnd}/${r.jain.tenants.length}`,
    '',
    'targets (issue 30, not gates):',
    `  ${noisy.line}`,
    `  ${jain.line}`,
    `  ${busy.line}`,
  ];
  const json = {
    fairness_b_rate_per_s: s.bRatePerS,
    fairness_task_ms: s.taskMs,
    fairness_slots: slots,
    b_alone_p50_ms: round(r.alone.b.p50),
    b_alone_p99_ms: round(r.alone.b.p99),
    b_noisy_p50_ms: round(r.noisy.b.p50),
    b_noisy_p99_ms: round(r.noisy.b.p99),
    b_noisy_p99_bound_ms: round(noisy.boundMs),
    b_noisy_met: noisy.met,
    jain_index: round(jain.index),
    jain_met: jain.met,
    busy_share: round(r.noisy.busy),
    jain_busy_share: round(r.jain.busy),
    busy_met: busy.met,
    bullmq_b_p50_ms: round(r.bullmq.b.p50),
    bullmq_b_p99_ms: round(r.bullmq.b.p99),
    bullmq_b_lower_bound: r.bullmq.b.lowerBound,
  };
  return { lines, json };
}
