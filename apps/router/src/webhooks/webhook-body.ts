import type { CallbackMessage, WebhookBody, WebhookEventType } from '@agent-reach/protocol';

/** JSON text as its value; text that is not JSON as itself. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The webhook body of a callback item, as JSON text cut before its sequence number (`head`, then
 * the number, then `tail`): the number is the task's next, given where the delivery is made
 * (webhook-enqueue-6.lua). `taskId` is the id the task's tenant sees.
 */
export function webhookBodyParts(
  msg: CallbackMessage,
  taskId: string,
): { type: WebhookEventType; head: string; tail: string } {
  const type = `task.${msg.status}` as WebhookEventType;
  const data: WebhookBody['data'] = {
    task_id: taskId,
    status: msg.status,
    capability: msg.capability,
    agent_id: msg.agent_id,
    attempt: msg.attempt,
    completed_at: msg.completed_at,
    ...(msg.result !== undefined ? { result: parsed(msg.result) } : {}),
    ...(msg.error !== undefined ? { error: msg.error } : {}),
    ...(msg.duration_ms !== undefined ? { duration_ms: msg.duration_ms } : {}),
    ...(msg.progress !== undefined ? { progress: parsed(msg.progress) } : {}),
    ...(msg.chunk !== undefined ? { chunk: msg.chunk } : {}),
    seq: 0,
  };
  const body: WebhookBody = { type, timestamp: new Date(msg.completed_at).toISOString(), data };
  // `seq` is the last key of `data`, the last key of the body: the text ends `0}}`.
  const json = JSON.stringify(body);
  return { type, head: json.slice(0, -3), tail: '}}' };
}

/**
 * What follows a failed try: the wait before the next (`schedule[triesBefore]`), or undefined when
 * the schedule is spent and the delivery is given up. `triesBefore` counts the tries before this one.
 */
export function nextDelayMs(schedule: readonly number[], triesBefore: number): number | undefined {
  return schedule[triesBefore];
}
