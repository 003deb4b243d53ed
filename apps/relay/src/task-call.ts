import {
  ENDPOINT_UNREACHABLE,
  FailureCode,
  MAX_PROGRESS_BYTES,
  type TaskMessage,
} from '@agent-reach/protocol';
import type { CallOutcome, EndpointClient } from './calls/endpoint-client.ts';
import type { AckBody, RelayAcks } from './relay-acks.ts';

/** Why a running call was stopped. */
export type StopReason = 'cancelled' | 'fenced' | 'shutdown';

/** One task attempt on an endpoint, from its receipt to its final ack. */
export interface TaskCallOptions {
  task: TaskMessage;
  messageId: string;
  /** The skill or tool name the endpoint knows the capability by. */
  remoteName: string;
  client: EndpointClient;
  acks: RelayAcks;
  /** Aborted with a {@link StopReason}. */
  signal: AbortSignal;
}

/** How a call ended, for the agent's state and the relay's metrics. */
export interface TaskCallResult {
  outcome: CallOutcome | { kind: 'stopped'; reason: StopReason };
  durationMs: number;
}

/**
 * How long a receipt waits for its call to end: a call over within it sends no receipt, its
 * completion or failure stands for it (`received_ago_ms`, docs/PROTOCOL.md §4), one ack and one
 * script less per task. Output from the call sends the receipt first.
 */
export const RECEIPT_FOLD_MS = 10;

/**
 * Runs one task on its endpoint and reports it as the agent would: `received`, output while it
 * runs (progress, chunks, in order), then `completed` or `failed`, then the inbox entry's XACK
 * (written together: the command connection pipelines them with other tasks' acks). A call
 * stopped because the instance was fenced or the relay stops reports nothing: the task is taken
 * back by registry-sync (fencing, execution lease) and sent again.
 */
export async function runTaskCall(o: TaskCallOptions): Promise<TaskCallResult> {
  const { task, acks } = o;
  const base = { task_id: task.task_id, attempt: task.attempt };
  const started = performance.now();

  let receipt: Promise<void> | undefined;
  const sendReceipt = (): Promise<void> => {
    clearTimeout(timer);
    receipt ??= acks.write({ ...base, stage: 'received' }).catch(() => undefined);
    return receipt;
  };
  const timer = setTimeout(() => void sendReceipt(), RECEIPT_FOLD_MS);

  // Output acks leave in order, after the receipt, all before the final one.
  let output: Promise<void> = Promise.resolve();
  const emit = (body: AckBody) => {
    output = output
      .then(sendReceipt)
      .then(() => acks.write(body))
      .catch(() => undefined);
  };
  const outcome = await callOnce(o, {
    onProgress: (value) => emit({ ...base, stage: 'progress', progress: progressText(value) }),
    onChunk: (value) =>
      emit({ ...base, stage: 'chunk', chunks: [typeof value === 'string' ? value : json(value)] }),
  });
  await output;
  clearTimeout(timer);
  const durationMs = Math.round(performance.now() - started);
  const reason = o.signal.aborted ? (o.signal.reason as StopReason) : undefined;
  if (reason === 'fenced' || reason === 'shutdown') {
    return { outcome: { kind: 'stopped', reason }, durationMs };
  }
  // No receipt yet: this ack stands for it.
  const folded = receipt === undefined ? { received_ago_ms: durationMs } : {};
  await receipt;
  const final: AckBody =
    outcome.kind === 'completed'
      ? {
          ...base,
          stage: 'completed',
          result: json(outcome.result ?? null),
          duration_ms: durationMs,
          capability: task.capability,
          ...folded,
        }
      : {
          ...base,
          stage: 'failed',
          error: outcome.error,
          error_code: reason === 'cancelled' ? 'CANCELLED' : outcome.code,
          retryable: reason === 'cancelled' ? false : outcome.retryable,
          duration_ms: durationMs,
          ...folded,
        };
  // The XACK frees the agent's slot at once (docs/ARCHITECTURE.md, Slots): only once the result
  // is written, so a relay that stops in between leaves the slot held, never a result unwritten.
  await acks.write(final);
  await acks.xack(o.messageId);
  return { outcome, durationMs };
}

async function callOnce(
  o: TaskCallOptions,
  out: { onProgress(value: unknown): void; onChunk(value: unknown): void },
): Promise<CallOutcome> {
  const { task } = o;
  let payload: unknown;
  try {
    payload = JSON.parse(task.payload);
  } catch {
    return fail(FailureCode.invalidPayload, 'the payload is not JSON text', false);
  }
  if (task.deadline_ms > 0 && Date.now() >= task.deadline_ms)
    return fail(FailureCode.deadlineExceeded, 'the deadline passed before the call', false);
  try {
    return await o.client.call({
      taskId: task.task_id,
      attempt: task.attempt,
      capability: task.capability,
      remoteName: o.remoteName,
      payload,
      deadlineMs: task.deadline_ms,
      signal: o.signal,
      ...out,
    });
  } catch (err) {
    // Clients report failures as outcomes; a throw is a fault of the client itself.
    return fail(FailureCode.handlerError, `relay call failed: ${String(err)}`, true);
  }
}

function fail(code: string, error: string, retryable: boolean): CallOutcome {
  return { kind: 'failed', code, error, retryable };
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return JSON.stringify(String(value));
  }
}

/** A progress value as JSON text within the protocol's bound. */
function progressText(value: unknown): string {
  const text = json(value);
  if (Buffer.byteLength(text) <= MAX_PROGRESS_BYTES) return text;
  return JSON.stringify({ truncated: true, text: text.slice(0, 1000) });
}

/** True for an outcome that says the endpoint could not be reached at all. */
export function isUnreachable(outcome: TaskCallResult['outcome']): boolean {
  return (
    outcome.kind === 'failed' &&
    (outcome.unreachable === true || outcome.code === ENDPOINT_UNREACHABLE)
  );
}
