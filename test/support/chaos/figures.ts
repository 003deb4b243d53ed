/**
 * The chaos test's figures: what was accepted, how it ended, what ran twice, what reached the
 * callback topics, how long a killed agent's tasks took to complete elsewhere — computed from
 * the tasks' timelines (GET /v1/tasks/:id), the topics, and the agents' execution log.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CallbackItem, TaskView } from '@agent-reach/protocol';
import type { Execution } from './exec-log.ts';
import type { AgentKill, AgentPause } from './fleet.ts';

/** A process that was down for a while (a router, Redis). */
export interface Outage {
  what: string;
  at: number;
  back_at: number;
}

/** Everything the figures are computed from. */
export interface ChaosRecord {
  submitted: number;
  /** task_id → callback topic, for every accepted task. */
  accepted: Map<string, string>;
  submitTries: Record<string, number>;
  /** GET /v1/tasks/:id of every accepted task (undefined: 404 or unreadable). */
  views: Map<string, TaskView | undefined>;
  /** Every entry of every topic, read in full at the end. */
  callbacks: CallbackItem[];
  executions: Execution[];
  kills: AgentKill[];
  pauses: AgentPause[];
  outages: Outage[];
  /** `acks_refused:*` counters when the pause began and a few seconds after it ended. */
  refusedAroundPause: { before: Record<string, number>; after: Record<string, number> };
  /** The stats hash at the end. */
  stats: Record<string, string>;
  maxAttempts: number;
  durationMs: number;
  /** Cancels sent during the run: the task_ids answered 202, and the count of each answer. */
  cancels?: { cancelled: string[]; answers: Record<string, number> };
}

/** The figures, as printed and written to test/artifacts/chaos.json. */
export interface ChaosFigures {
  submitted: number;
  accepted: number;
  never_accepted: number;
  completed: number;
  dead: number;
  dead_by_reason: Record<string, number>;
  /** Cancelled (POST /v1/tasks/:id/cancel answered 202). */
  cancelled: number;
  /** Cancel requests by answer (`202`, `409` ALREADY_FINAL, `error` for no answer). */
  cancel_answers: Record<string, number>;
  /**
   * Tasks whose cancel answered 202 but that ended otherwise, or whose topic got a completion.
   * Must be 0.
   */
  cancel_violations: number;
  /** Accepted and neither completed, dead nor cancelled at the end. Must be 0. */
  lost: number;
  lost_sample: string[];
  executions: number;
  /** Handler runs beyond the first for a task_id. */
  duplicate_executions: number;
  /** task_ids with more than one `completed` entry across the topics. Must be 0. */
  duplicate_completions_delivered: number;
  /** Final tasks whose final entry never reached their topic. */
  missing_callbacks: number;
  /** Tasks that were on a SIGKILLed agent and completed elsewhere later. */
  killed_agent_tasks: number;
  /** The longest time from a SIGKILL to the completion of a task that was on the killed agent. */
  slowest_recovery_ms: number;
  /** The five slowest recoveries (kills and the pause), to look up in the tasks' timelines. */
  slowest_recoveries: Recovery[];
  paused: {
    tasks_moved: number;
    slowest_recovery_ms: number;
    /** Handler runs of the paused process that ended after SIGCONT, for attempts delivered before it. */
    late_results: number;
    /** Of those, results that were applied or reached a topic. Must be 0. */
    late_results_accepted: number;
    /** Rise of `acks_refused:not_assigned` + `acks_refused:stale_epoch` around the pause. */
    refused_acks_rise: number;
  };
  /** Refused acks by reason at the end. */
  refused_acks: Record<string, number>;
  refused_late_acks: number;
  chaos: {
    agent_kills: number;
    agent_pauses: number;
    outages: Outage[];
    slowest_agent_restart_ms: number;
  };
  submit_tries: Record<string, number>;
  /** REACH_MAX_ATTEMPTS the run used. */
  max_attempts: number;
  duration_ms: number;
}

type Entry = TaskView['timeline'][number];

const FINAL = new Set(['completed', 'dead', 'cancelled']);

function refusedCounters(stats: Record<string, string | number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(stats))
    if (k.startsWith('acks_refused:')) out[k.slice('acks_refused:'.length)] = Number(v);
  return out;
}

function lateRefusals(counters: Record<string, number>): number {
  return (counters['not_assigned'] ?? 0) + (counters['stale_epoch'] ?? 0);
}

/** A task that was on a disrupted agent and completed elsewhere. */
export interface Recovery {
  task_id: string;
  agent_id: string;
  kind: 'kill' | 'pause';
  ms: number;
}

/** An agent going away (kill or pause) from `at` until `end`. */
interface Disruption {
  agent_id: string;
  at: number;
  end: number;
  kind: 'kill' | 'pause';
}

/**
 * Tasks sent to the disrupted agent since its previous disruption ended, whose attempt there did
 * not complete, and that completed after the disruption began: the time from the disruption to
 * that completion.
 */
function recoveries(
  d: Disruption,
  since: number,
  views: Map<string, TaskView | undefined>,
): Recovery[] {
  const out: Recovery[] = [];
  for (const view of views.values()) {
    if (view?.status !== 'completed') continue;
    const done = view.timeline.find((e) => e.stage === 'completed');
    if (!done || done.at <= d.at) continue;
    const moved = view.timeline.some(
      (e: Entry) =>
        e.stage === 'sent' &&
        e.agent_id === d.agent_id &&
        e.attempt !== done.attempt &&
        e.at > since &&
        e.at <= d.end,
    );
    if (moved)
      out.push({ task_id: view.task_id, agent_id: d.agent_id, kind: d.kind, ms: done.at - d.at });
  }
  return out;
}

/** Computes the figures. */
export function computeFigures(r: ChaosRecord): ChaosFigures {
  let completed = 0;
  let dead = 0;
  let cancelled = 0;
  const deadBy: Record<string, number> = {};
  const lost: string[] = [];
  for (const [taskId, view] of [...r.accepted.keys()].map((id) => [id, r.views.get(id)] as const)) {
    if (view?.status === 'completed') completed++;
    else if (view?.status === 'dead') {
      dead++;
      const why = view.dead_reason ?? '?';
      deadBy[why] = (deadBy[why] ?? 0) + 1;
    } else if (view?.status === 'cancelled') cancelled++;
    else lost.push(taskId);
  }

  const starts = new Map<string, number>();
  for (const e of r.executions) starts.set(e.task_id, (starts.get(e.task_id) ?? 0) + 1);
  const duplicateExecutions = [...starts.values()].reduce((sum, n) => sum + n - 1, 0);

  const byTask = new Map<string, CallbackItem[]>();
  for (const item of r.callbacks)
    byTask.set(item.task_id, [...(byTask.get(item.task_id) ?? []), item]);
  let duplicateCompletions = 0;
  for (const items of byTask.values())
    if (items.filter((x) => x.status === 'completed').length > 1) duplicateCompletions++;
  let cancelViolations = 0;
  for (const taskId of r.cancels?.cancelled ?? []) {
    const items = byTask.get(taskId) ?? [];
    if (r.views.get(taskId)?.status !== 'cancelled' || items.some((x) => x.status === 'completed'))
      cancelViolations++;
  }
  let missingCallbacks = 0;
  for (const taskId of r.accepted.keys()) {
    const status = r.views.get(taskId)?.status;
    if (status && FINAL.has(status) && !(byTask.get(taskId) ?? []).some((x) => x.status === status))
      missingCallbacks++;
  }

  // Disruptions per agent in time order, so a task is charged to the one it was caught in.
  const disruptions: Disruption[] = [
    ...r.kills.map((k) => ({
      agent_id: k.agent_id,
      at: k.at,
      end: k.back_at ?? k.at + 60_000,
      kind: 'kill' as const,
    })),
    ...r.pauses.map((p) => ({
      agent_id: p.agent_id,
      at: p.at,
      end: p.resumed_at,
      kind: 'pause' as const,
    })),
  ].sort((a, b) => a.at - b.at);
  const killed: Recovery[] = [];
  const paused: Recovery[] = [];
  const lastEnd = new Map<string, number>();
  for (const d of disruptions) {
    const found = recoveries(d, lastEnd.get(d.agent_id) ?? 0, r.views);
    (d.kind === 'kill' ? killed : paused).push(...found);
    lastEnd.set(d.agent_id, d.end);
  }

  // The paused process's results that came after SIGCONT for attempts it had been given before.
  let lateResults = 0;
  let lateAccepted = 0;
  for (const p of r.pauses) {
    for (const e of r.executions) {
      if (e.pid !== p.pid || e.doneAt === undefined || e.doneAt < p.resumed_at) continue;
      const view = r.views.get(e.task_id);
      const sent = view?.timeline.find(
        (x) => x.stage === 'sent' && x.agent_id === p.agent_id && x.attempt === e.attempt,
      );
      if (!sent || sent.at > p.resumed_at) continue;
      lateResults++;
      const applied = view?.timeline.some(
        (x) => x.stage === 'completed' && x.agent_id === p.agent_id && x.attempt === e.attempt,
      );
      const published = (byTask.get(e.task_id) ?? []).some(
        (x) => x.status === 'completed' && x.agent_id === p.agent_id && x.attempt === e.attempt,
      );
      if (applied || published) lateAccepted++;
    }
  }

  const refused = refusedCounters(r.stats);
  const restarts = r.kills.map((k) => (k.back_at ?? Infinity) - k.at);
  return {
    submitted: r.submitted,
    accepted: r.accepted.size,
    never_accepted: r.submitted - r.accepted.size,
    completed,
    dead,
    dead_by_reason: deadBy,
    cancelled,
    cancel_answers: r.cancels?.answers ?? {},
    cancel_violations: cancelViolations,
    lost: lost.length,
    lost_sample: lost.slice(0, 10),
    executions: r.executions.length,
    duplicate_executions: duplicateExecutions,
    duplicate_completions_delivered: duplicateCompletions,
    missing_callbacks: missingCallbacks,
    killed_agent_tasks: killed.length,
    slowest_recovery_ms: Math.max(0, ...killed.map((x) => x.ms)),
    slowest_recoveries: [...killed, ...paused].sort((a, b) => b.ms - a.ms).slice(0, 5),
    paused: {
      tasks_moved: paused.length,
      slowest_recovery_ms: Math.max(0, ...paused.map((x) => x.ms)),
      late_results: lateResults,
      late_results_accepted: lateAccepted,
      refused_acks_rise:
        lateRefusals(r.refusedAroundPause.after) - lateRefusals(r.refusedAroundPause.before),
    },
    refused_acks: refused,
    refused_late_acks: lateRefusals(refused),
    chaos: {
      agent_kills: r.kills.length,
      agent_pauses: r.pauses.length,
      outages: r.outages,
      slowest_agent_restart_ms: restarts.length > 0 ? Math.max(...restarts) : 0,
    },
    submit_tries: r.submitTries,
    max_attempts: r.maxAttempts,
    duration_ms: r.durationMs,
  };
}

/** The one line of figures the test prints. */
export function figuresLine(f: ChaosFigures): string {
  // The reasons a chaos run can cause are always shown, others only when they occur.
  const dead = Object.entries({ max_attempts: 0, deadline: 0, ...f.dead_by_reason })
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    `chaos: accepted=${f.accepted} completed=${f.completed} dead=${f.dead} (${dead}) cancelled=${f.cancelled}`,
    `cancels=${Object.entries(f.cancel_answers)
      .map(([k, v]) => `${k}:${v}`)
      .join(',')} cancel_violations=${f.cancel_violations}`,
    `lost=${f.lost} duplicate_executions=${f.duplicate_executions} duplicate_completions_delivered=${f.duplicate_completions_delivered}`,
    `missing_callbacks=${f.missing_callbacks} slowest_recovery_ms=${f.slowest_recovery_ms} (${f.killed_agent_tasks} tasks, ${f.chaos.agent_kills} kills)`,
    `paused_recovery_ms=${f.paused.slowest_recovery_ms} late_results=${f.paused.late_results} late_results_accepted=${f.paused.late_results_accepted}`,
    `refused_late_acks=${f.refused_late_acks} (+${f.paused.refused_acks_rise} around the pause)`,
    `outages=${f.chaos.outages.map((o) => `${o.what}:${o.back_at - o.at}ms`).join(',')} duration_ms=${f.duration_ms}`,
  ].join(' ');
}

/** Writes the figures as JSON (the folder is created if needed). */
export async function writeFigures(path: string, f: ChaosFigures): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(f, null, 2)}\n`);
}
