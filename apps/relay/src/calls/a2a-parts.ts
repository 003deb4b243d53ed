import {
  Role,
  taskStateToJSON,
  type TaskState,
  type Artifact,
  type Message,
  type Part,
  type SendMessageRequest,
  type TaskArtifactUpdateEvent,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { CallRequest } from './endpoint-client.ts';
import { isJsonObject } from './json.ts';

/**
 * Pure mappings between a relay's calls and A2A messages: the message a call sends, and the
 * progress, chunks and result its replies stand for.
 */

/** A part as a JSON value: `{text}`, `{data}`, `{url, …}` or `{raw, …}` (base64). */
export type PartValue =
  | { text: string }
  | { data: unknown }
  | { url: string; mediaType?: string; filename?: string }
  | { raw: string; mediaType?: string; filename?: string };

const part = (content: Part['content'], mediaType: string): Part => ({
  content,
  metadata: undefined,
  filename: '',
  mediaType,
});

/**
 * The A2A message of one attempt: a text part with the payload (a string as is, anything else
 * as JSON text) and, for an object payload, a data part with it; `messageId`
 * `<task_id>#<attempt>`; `contextId` the task's id, so every attempt of a task shares a context
 * and a retry is recognisable; and metadata `skill` (the skill's id), `task_id` and `attempt`,
 * on the message and on the request.
 */
export function messageRequest(
  req: Pick<CallRequest, 'taskId' | 'attempt' | 'remoteName' | 'payload'>,
): SendMessageRequest {
  const { payload } = req;
  const metadata = { skill: req.remoteName, task_id: req.taskId, attempt: req.attempt };
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload ?? null);
  const parts = [part({ $case: 'text', value: text }, 'text/plain')];
  // A2A 0.3 data parts hold objects only, so other JSON values go as text alone.
  if (isJsonObject(payload))
    parts.push(part({ $case: 'data', value: payload }, 'application/json'));
  return {
    tenant: '',
    message: {
      messageId: `${req.taskId}#${req.attempt}`,
      contextId: req.taskId,
      taskId: '',
      role: Role.ROLE_USER,
      parts,
      metadata,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata,
  };
}

/** A part as a {@link PartValue}; undefined for a part with no content. */
export function partValue(p: Part): PartValue | undefined {
  const { content } = p;
  const file = {
    ...(p.mediaType ? { mediaType: p.mediaType } : {}),
    ...(p.filename ? { filename: p.filename } : {}),
  };
  switch (content?.$case) {
    case 'text':
      return { text: content.value };
    case 'data':
      return { data: content.value as unknown };
    case 'url':
      return { url: content.value, ...file };
    case 'raw':
      return { raw: Buffer.from(content.value).toString('base64'), ...file };
    default:
      return undefined;
  }
}

/** An artifact chunk's part as a chunk: a text part its text, a data part its data, else the part. */
export function chunkValue(p: Part): unknown {
  const value = partValue(p);
  if (value && 'text' in value) return value.text;
  if (value && 'data' in value) return value.data;
  return value;
}

/** Consecutive text parts joined into one: text streamed in chunks is one text. */
export function joinTexts(parts: readonly Part[]): Part[] {
  const joined: Part[] = [];
  for (const p of parts) {
    const last = joined[joined.length - 1];
    if (last?.content?.$case === 'text' && p.content?.$case === 'text')
      joined[joined.length - 1] = {
        ...last,
        content: { $case: 'text', value: last.content.value + p.content.value },
      };
    else joined.push(p);
  }
  return joined;
}

/**
 * The result parts stand for: nothing → null, a single text part → `{ "text": … }`, a single
 * data part → its data, anything else → `{ "parts": [PartValue…] }`.
 */
export function resultOfParts(parts: readonly Part[]): unknown {
  const values = parts.map(partValue).filter((v) => v !== undefined);
  if (values.length === 0) return null;
  if (values.length === 1) {
    const only = values[0]!;
    if ('text' in only) return { text: only.text };
    if ('data' in only) return only.data;
  }
  return { parts: values };
}

/** The text of a message's text parts, joined by newlines ('' for none). */
export function messageText(message: Message | undefined): string {
  return (message?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** A task state's name as the A2A 1.0 JSON has it without its prefix: `working`, `completed`… */
export function stateName(state: TaskState): string {
  return taskStateToJSON(state)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase();
}

/** A status update as a progress value: `{ state, message? }`. */
export function statusProgress(status: TaskStatus): { state: string; message?: string } {
  const text = messageText(status.message);
  return text
    ? { state: stateName(status.state), message: text }
    : { state: stateName(status.state) };
}

/**
 * A task's artifacts as its stream builds them: an update with `append` adds its parts to the
 * artifact of the same id, any other replaces or adds the artifact.
 */
export class ArtifactSet {
  readonly #byId = new Map<string, Part[]>();

  /** Applies one artifact update. */
  apply(event: TaskArtifactUpdateEvent): void {
    const artifact = event.artifact;
    if (!artifact) return;
    const before = this.#byId.get(artifact.artifactId);
    this.#byId.set(
      artifact.artifactId,
      event.append && before ? [...before, ...artifact.parts] : [...artifact.parts],
    );
  }

  /** Takes a task's artifacts as they are (a task snapshot). */
  reset(artifacts: readonly Artifact[]): void {
    this.#byId.clear();
    for (const a of artifacts) this.#byId.set(a.artifactId, [...a.parts]);
  }

  /** Every artifact's parts, in the order first seen, each artifact's texts joined. */
  parts(): Part[] {
    return [...this.#byId.values()].flatMap(joinTexts);
  }

  get size(): number {
    return this.#byId.size;
  }
}
