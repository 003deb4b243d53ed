/**
 * What a running task reports besides its stages (docs/PROTOCOL.md §4, Progress and streamed
 * output): a `progress` ack carries one progress value, a `chunk` ack one or more chunks of
 * output text in order. Both travel on the agent's acks stream, signed like every ack, and change
 * no stage of the task.
 */
export const PROGRESS_STAGE = 'progress';
/** See {@link PROGRESS_STAGE}. */
export const CHUNK_STAGE = 'chunk';
/** The ack stages that report a running task's output. */
export const OUTPUT_STAGES = [PROGRESS_STAGE, CHUNK_STAGE] as const;
export type OutputStage = (typeof OUTPUT_STAGES)[number];

/** Most chunks one `chunk` ack carries; a worker with more sends several acks. */
export const MAX_CHUNKS_PER_ACK = 1000;
/** Longest progress value, as JSON text, in bytes. */
export const MAX_PROGRESS_BYTES = 4096;

/** Kinds of entry in a task's events stream (`keys.taskEvents`). */
export type TaskOutputKind = 'progress' | 'chunk' | 'truncated';

/** Fields of an entry of a task's events stream. */
export const TaskEventField = {
  /** `progress`, `chunk` or `truncated`. */
  kind: 'kind',
  /** Redis time of the ack that carried it, epoch ms. */
  at: 'at',
  attempt: 'attempt',
  /** `chunk`: the text; `progress`: the value as JSON text; `truncated`: JSON `{chunks, bytes}`. */
  data: 'data',
} as const;

/** One entry of a task's events stream, decoded. */
export interface TaskOutputEntry {
  /** The stream entry id. */
  id: string;
  kind: TaskOutputKind;
  at: number;
  attempt: number;
  data: string;
}

/** Encodes an events-stream entry for XADD. */
export function encodeTaskOutput(e: Omit<TaskOutputEntry, 'id'>): string[] {
  return [
    TaskEventField.kind,
    e.kind,
    TaskEventField.at,
    String(e.at),
    TaskEventField.attempt,
    String(e.attempt),
    TaskEventField.data,
    e.data,
  ];
}

/** Decodes an events-stream entry (written by registry-sync, so trusted but still typed). */
export function decodeTaskOutput(id: string, fields: readonly string[]): TaskOutputEntry {
  const r: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) r[fields[i] as string] = fields[i + 1] as string;
  const kind = r[TaskEventField.kind];
  return {
    id,
    kind: kind === 'progress' || kind === 'truncated' ? kind : 'chunk',
    at: Number(r[TaskEventField.at] ?? 0) || 0,
    attempt: Number(r[TaskEventField.attempt] ?? 0) || 0,
    data: r[TaskEventField.data] ?? '',
  };
}

/**
 * Where a follower of `GET /v1/tasks/:id/events` stands, sent as each event's `id:` and taken
 * back from `Last-Event-ID`: the last events-stream entry sent (`0-0` for none), and how many of
 * the task's stages were sent. Stages are counted, not timed: a stage's time can move (the
 * accepted stage takes the earliest time of its task's stages), and a stage written later may
 * carry an earlier time, so a time would skip stages — the final one too. Written
 * `<entry id>.<stages sent>`; clients treat it as opaque text.
 */
export interface TaskEventCursor {
  entryId: string;
  stages: number;
}

/** The cursor before anything was sent. */
export const START_CURSOR: TaskEventCursor = { entryId: '0-0', stages: 0 };

/** The pattern of an event id (a cursor as text), for the route's `Last-Event-ID` header. */
export const EVENT_CURSOR_PATTERN = '^\\d{1,20}-\\d{1,20}\\.\\d{1,6}$';

/** A cursor as the event id text. */
export function formatEventCursor(c: TaskEventCursor): string {
  return `${c.entryId}.${c.stages}`;
}

/** A `Last-Event-ID` read back; undefined when it is not one this server wrote. */
export function parseEventCursor(text: string | undefined): TaskEventCursor | undefined {
  const m = /^(\d{1,20}-\d{1,20})\.(\d{1,6})$/.exec(text ?? '');
  if (!m) return undefined;
  return { entryId: m[1] as string, stages: Number(m[2]) };
}
