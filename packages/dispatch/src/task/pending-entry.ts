import { streamIdMs } from '@agent-reach/protocol';

/** A delivered, unfinished task attempt as the agent's pending hash holds it. */
export interface PendingEntry {
  taskId: string;
  attempt: number;
  /** The inbox entry's id, or for a pool task the pool entry's. */
  messageId: string;
  /** When it was delivered: the entry id's time (for a pool task, when it entered the pool). */
  sentAt: number;
  deadlineMs: number;
  /** 0 until the worker's receipt. */
  receivedAt: number;
  /** The agent epoch the attempt was delivered under. */
  epoch: number;
  /** A pull agent's task from this capability's pool (mark `pool=<capability>`). */
  pool?: string;
  /** A liveness probe (mark `probe`, written by the deliver script: nothing a caller can set). */
  probe: boolean;
  /** A shadow copy (mark `shadow`): never retried, its outcome kept apart (shadow.ts). */
  shadow?: boolean;
}

/**
 * Parses `attempt|epoch|mark|entry id|received_at|deadline_ms` (keys.ts `pending()`), the mark
 * empty, `probe`, `shadow` or `pool=<capability>`; undefined when malformed. The fields come in the order
 * the scripts need them: an ack compares its `attempt|epoch|` with the entry's start as one
 * string, and the mark and entry id follow, so no script parses numbers out of it.
 */
export function parsePendingEntry(taskId: string, value: string): PendingEntry | undefined {
  const parts = value.split('|');
  if (parts.length !== 6) return undefined;
  const [attempt, epoch, mark, messageId, receivedAt, deadlineMs] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const nums = [attempt, epoch, receivedAt, deadlineMs].map(Number);
  if (nums.some((n) => !Number.isFinite(n)) || messageId === '') return undefined;
  const sentAt = streamIdMs(messageId);
  if (!Number.isFinite(sentAt)) return undefined;
  return {
    taskId,
    attempt: nums[0] as number,
    messageId,
    sentAt,
    deadlineMs: nums[3] as number,
    receivedAt: nums[2] as number,
    epoch: nums[1] as number,
    ...(mark.startsWith('pool=') ? { pool: mark.slice('pool='.length) } : {}),
    probe: mark === 'probe',
    ...(mark === 'shadow' ? { shadow: true } : {}),
  };
}

/** The pending entry `parsePendingEntry` reads, as the scripts write it (for tests and tools). */
export function formatPendingEntry(e: Omit<PendingEntry, 'taskId' | 'sentAt'>): string {
  const mark = e.probe
    ? 'probe'
    : e.shadow
      ? 'shadow'
      : e.pool !== undefined
        ? `pool=${e.pool}`
        : '';
  return [e.attempt, e.epoch, mark, e.messageId, e.receivedAt, e.deadlineMs].join('|');
}
