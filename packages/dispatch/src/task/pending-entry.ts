/** A delivered, unfinished task attempt as the agent's pending hash holds it. */
export interface PendingEntry {
  taskId: string;
  attempt: number;
  /** The inbox entry's id, or for a pool task the pool entry's. */
  messageId: string;
  sentAt: number;
  deadlineMs: number;
  /** 0 until the worker's receipt. */
  receivedAt: number;
  /** The agent epoch the attempt was delivered under. */
  epoch: number;
  /** A pull agent's task from this capability's pool (`|pool=<capability>`). */
  pool?: string;
  /** A liveness probe (`|probe`, written by the deliver script: nothing a caller can set). */
  probe: boolean;
}

/**
 * Parses `attempt|entry id|sent_at|deadline_ms|received_at|epoch`, then the marks
 * `|pool=<capability>` and `|probe` (keys.ts `pending()`); undefined when malformed.
 */
export function parsePendingEntry(taskId: string, value: string): PendingEntry | undefined {
  const parts = value.split('|');
  if (parts.length < 6) return undefined;
  const [attempt, messageId, sentAt, deadlineMs, receivedAt, epoch, ...marks] = parts;
  const nums = [attempt, sentAt, deadlineMs, receivedAt, epoch].map(Number);
  if (nums.some((n) => !Number.isFinite(n))) return undefined;
  const pool = marks.find((m) => m.startsWith('pool='))?.slice('pool='.length);
  return {
    taskId,
    attempt: nums[0] as number,
    messageId: messageId ?? '',
    sentAt: nums[1] as number,
    deadlineMs: nums[2] as number,
    receivedAt: nums[3] as number,
    epoch: nums[4] as number,
    ...(pool ? { pool } : {}),
    probe: marks.includes('probe'),
  };
}
