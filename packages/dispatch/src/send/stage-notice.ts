import type { EventSink } from '@agent-reach/events';
import type { FleetEventLog } from '../fleet-event-log.ts';

/** A task moved to `retried` or `dead`: what operators and dashboards are told. */
export interface StageNotice {
  stage: 'retried' | 'dead';
  taskId: string;
  capability: string;
  attempt: number;
  reason: string;
  /** The agent of the attempt given up on, if any. */
  agentId?: string;
  /** '' for none. */
  traceId: string;
  /** Epoch ms. */
  at: number;
}

/**
 * Tells the live views (fleet event) and the time series (task event) of a retry or a death,
 * the same way for both: what `TaskOutcomes` and `DeadLetterer` announce.
 */
export function noticeStage(fleet: FleetEventLog, events: EventSink, n: StageNotice): void {
  fleet.append({
    kind: n.stage,
    task_id: n.taskId,
    capability: n.capability,
    attempt: n.attempt,
    reason: n.reason,
    ...(n.agentId ? { agent_id: n.agentId } : {}),
  });
  events.write({
    stage: n.stage,
    capability: n.capability,
    agent_id: n.agentId || '-',
    task_id: n.taskId,
    attempt: n.attempt,
    at: n.at,
    reason: n.reason,
    ...(n.traceId ? { trace_id: n.traceId } : {}),
  });
}
