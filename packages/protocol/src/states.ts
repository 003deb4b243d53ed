/**
 * Agent lifecycle. `DEGRADED`: failing or timing out too often (its health window's error rate),
 * so it gets tasks only when no HEALTHY agent has room, until it cools down and passes probes.
 */
export const AGENT_STATUSES = [
  'STARTING',
  'HEALTHY',
  'SUSPECT',
  'OFFLINE',
  'DRAINING',
  'DEGRADED',
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** Delivery channel an agent prefers. */
export type Channel = 'push' | 'pull';

/**
 * Task lifecycle. `completed`, `dead` and `cancelled` are final; `failed` is the moment between a worker's
 * failure report and the decision to retry (`retry_wait`) or dead-letter (`dead`); `delayed`: held
 * until its `delay_ms` / `run_at` (or a schedule's tick), then sent; `queued`: waiting in its
 * capability's waiting room for a free slot (docs/ROUTING.md, Waiting room), then sent.
 */
export const TASK_STATUSES = [
  'accepted',
  'delayed',
  'queued',
  'sent',
  'received',
  'completed',
  'failed',
  'retry_wait',
  'dead',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses after which nothing more happens to a task. */
export const FINAL_TASK_STATUSES: readonly TaskStatus[] = ['completed', 'dead', 'cancelled'];

/** Why a task was dead-lettered. */
export type DeadReason = 'max_attempts' | 'deadline' | 'loop' | 'not_retryable' | 'no_agent';

/** Stages a worker reports on the acks stream. */
export const ACK_STAGES = ['received', 'completed', 'failed'] as const;
export type AckStage = (typeof ACK_STAGES)[number];

/**
 * An ack that renews the execution leases of a worker's running tasks (`task_ids`); it changes no
 * task's stage and appears in no timeline (docs/PROTOCOL.md §4, Execution leases).
 */
export const RENEW_STAGE = 'renew';

/** Stages that appear in a task's timeline. */
export type TimelineStage =
  | 'accepted'
  /** Into the waiting room: `ahead` tasks waited there when it came. */
  | 'queued'
  | 'sent'
  | AckStage
  | 'retried'
  | 'dead'
  /** `POST /v1/tasks/:id/cancel`: `by` names the key that cancelled it. */
  | 'cancelled'
  /** The agent running a cancelled task stopped (its late ack, refused): its slot is free. */
  | 'stopped'
  /** The task's first progress value or output chunk (once per task; the rest are its events). */
  | 'streaming'
  /** The task's output reached REACH_STREAM_MAX_CHUNKS or _BYTES: later chunks are dropped. */
  | 'truncated';

/** One entry of a task's timeline; `at` is epoch milliseconds on Redis server time. */
export interface TimelineEntry {
  stage: TimelineStage;
  at: number;
  agent_id?: string;
  attempt?: number;
  message_id?: string;
  duration_ms?: number;
  error?: string;
  /** A failure's code (failure-codes.ts). */
  error_code?: string;
  reason?: string;
  due_at?: number;
  /** `queued`: how many tasks waited in the room when it came. */
  ahead?: number;
}
