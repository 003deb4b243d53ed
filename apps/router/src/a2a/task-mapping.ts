import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { TaskStatus, TaskView } from '@agent-reach/protocol';

/** The artifact that carries a completed task's result. */
export const RESULT_ARTIFACT_ID = 'result';
/** The artifact that carries a task's streamed output chunks (`ctx.stream`), appended in order. */
export const OUTPUT_ARTIFACT_ID = 'output';

/**
 * The A2A state of an Agent-Reach task status: accepted, delayed and queued tasks are `submitted`; a task
 * on its way to an agent, running, or waiting for a retry after a failed attempt is `working`
 * (a failed attempt is not the task's end); `completed` stays, a dead-lettered task is `failed`,
 * a cancelled one `canceled`.
 */
export function a2aState(status: TaskStatus): TaskState {
  switch (status) {
    case 'accepted':
    case 'delayed':
    case 'queued':
      return TaskState.TASK_STATE_SUBMITTED;
    case 'sent':
    case 'received':
    case 'failed':
    case 'retry_wait':
      return TaskState.TASK_STATE_WORKING;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'dead':
      return TaskState.TASK_STATE_FAILED;
    case 'cancelled':
      return TaskState.TASK_STATE_CANCELED;
  }
}

/** True for the A2A states after which nothing more happens to the task. */
export function isTerminalState(state: TaskState): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED
  );
}

/** A part as the SDK types it. */
export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: '',
  };
}

/** A JSON data part. */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: 'data', value },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
}

/** A result as a part: a string as text, any other JSON value as data. */
export function resultPart(value: unknown): Part {
  return typeof value === 'string' ? textPart(value) : dataPart(value);
}

/** Why a message's parts cannot make a payload. */
export class PartsError extends Error {
  override readonly name = 'PartsError';
}

/**
 * The task payload a message's parts stand for:
 * - one data part alone → its data, as it is;
 * - text parts only → `{text}`, the texts joined by a newline;
 * - anything else (several data parts, a mix, files) → `{parts: [...]}`, each part as
 *   `{text}`, `{data}` or `{url, media_type, filename}` (raw bytes as `{raw}`, base64).
 */
export function payloadOf(parts: readonly Part[]): unknown {
  if (parts.length === 0)
    throw new PartsError('the message has no parts: send a text or data part');
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.content?.$case === 'data') return (only.content.value as unknown) ?? null;
  if (parts.every((p) => p.content?.$case === 'text'))
    return {
      text: parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n'),
    };
  return {
    parts: parts.map((p) => {
      const c = p.content;
      if (c === undefined) throw new PartsError('a message part has no content');
      const file = {
        ...(p.mediaType ? { media_type: p.mediaType } : {}),
        ...(p.filename ? { filename: p.filename } : {}),
      };
      switch (c.$case) {
        case 'text':
          return { text: c.value };
        case 'data':
          return { data: (c.value as unknown) ?? null };
        case 'url':
          return { url: c.value, ...file };
        case 'raw':
          return { raw: Buffer.from(c.value).toString('base64'), ...file };
      }
    }),
  };
}

/** An agent message of one text part, for a status (an error, a progress note). */
export function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: `${taskId}:${Date.now()}:${Math.random().toString(36).slice(2, 8)}`,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The artifact of a task's result. */
export function resultArtifact(result: unknown): Artifact {
  return {
    artifactId: RESULT_ARTIFACT_ID,
    name: 'result',
    description: "The agent's result",
    parts: [resultPart(result)],
    metadata: undefined,
    extensions: [],
  };
}

/** The artifact of output chunks (text parts, in order). */
export function outputArtifact(chunks: readonly string[]): Artifact {
  return {
    artifactId: OUTPUT_ARTIFACT_ID,
    name: 'output',
    description: 'Output streamed by the agent while it ran',
    parts: chunks.map(textPart),
    metadata: undefined,
    extensions: [],
  };
}

/** Why a task ended without a result, in words: the error of its last attempt or its dead reason. */
export function failureText(
  view: Pick<TaskView, 'status' | 'error' | 'dead_reason'>,
): string | undefined {
  if (view.status === 'cancelled') return 'cancelled';
  if (view.status !== 'dead') return undefined;
  const reason = view.dead_reason ? `dead-lettered (${view.dead_reason})` : 'dead-lettered';
  return view.error ? `${reason}: ${view.error}` : reason;
}

/**
 * An Agent-Reach task as an A2A task: its id is the task_id (as the caller names it), its
 * contextId the one it was sent with (its session), else its own id; the result is the artifact
 * `result`; a failed task's status carries the error as an agent message. The task's Agent-Reach
 * status, agent and attempts are in `metadata.agent_reach`.
 */
export function taskOf(view: TaskView, contextId: string): Task {
  const state = a2aState(view.status);
  const failure = failureText(view);
  const last = view.timeline[view.timeline.length - 1];
  return {
    id: view.task_id,
    contextId,
    status: {
      state,
      message: failure ? agentMessage(view.task_id, contextId, [textPart(failure)]) : undefined,
      timestamp: new Date(last?.at ?? view.created_at).toISOString(),
    },
    artifacts: view.status === 'completed' ? [resultArtifact(view.result ?? null)] : [],
    history: [],
    metadata: {
      agent_reach: {
        status: view.status,
        capability: view.capability,
        ...(view.agent_id ? { agent_id: view.agent_id } : {}),
        attempts: view.attempts,
      },
    },
  };
}
