/** A delivered, unfinished task attempt as the agent's pending hash holds it. */
export interface PendingEntry {
  taskId: string;
  attempt: number;
  messageId: string;
  sentAt: number;
  deadlineMs: number;
  /** 0 until the worker's receipt. */
  receivedAt: number;
  /** The agent epoch the attempt was delivered under. */
  epoch: number;
}

/** Parses `attempt|entry id|sent_at|deadline_ms|received_at|epoch`; undefined when malformed. */
export function parsePendingEntry(taskId: string, value: string): PendingEntry | undefined {
  const parts = value.split('|');
  if (parts.length < 6) return undefined;
  const [attempt, messageId, sentAt, deadlineMs, receivedAt, epoch] = parts;
  const nums = [attempt, sentAt, deadlineMs, receivedAt, epoch].map(Number);
  if (nums.some((n) => !Number.isFinite(n))) return undefined;
  return {
    taskId,
    attempt: nums[0] as number,
    messageId: messageId ?? '',
    sentAt: nums[1] as number,
    deadlineMs: nums[2] as number,
    receivedAt: nums[3] as number,
    epoch: nums[4] as number,
  };
}
