import {
  cutJsonText,
  MAX_ARCHIVE_RECORD_BYTES,
  utf8Prefix,
  type ArchivedTaskPoint,
} from '@agent-reach/events';
import {
  DEFAULT_TENANT,
  splitScopedId,
  type TaskRecord,
  type TaskStatus,
  type TaskView,
} from '@agent-reach/protocol';
import { taskViewOf } from '@agent-reach/dispatch';

/** What decides what of a task is archived. */
export interface ArchiveRecordSettings {
  /** Payloads and results are archived unless the capability says otherwise. */
  archivePayloads: boolean;
  /** Per capability, over `archivePayloads`. */
  archivePayloadsByCapability: Readonly<Record<string, boolean>>;
  /** Longest payload and result kept, bytes of JSON text. */
  archiveMaxValueBytes: number;
}

/** The longest `error` kept in a record that would otherwise not fit. */
const SHORT_ERROR_CHARS = 1024;
/** Timeline entries kept at each end of a record that would otherwise not fit. */
const TIMELINE_ENDS = 10;

/** True when the capability's payloads and results are archived. */
export function archivesPayloads(settings: ArchiveRecordSettings, capability: string): boolean {
  const own = Object.hasOwn(settings.archivePayloadsByCapability, capability)
    ? settings.archivePayloadsByCapability[capability]
    : undefined;
  return own ?? settings.archivePayloads;
}

/** When a final task ended, by its status; undefined for a task that is not final. */
export function endOf(task: TaskRecord): number | undefined {
  const ends: Partial<Record<TaskStatus, number | undefined>> = {
    completed: task.completedAt,
    dead: task.deadAt,
    cancelled: task.cancelledAt,
  };
  if (!(task.status in ends)) return undefined;
  const at = ends[task.status];
  return at !== undefined && at > 0 ? at : (task.createdAt ?? 0);
}

/** The code of the task's last failure (its timeline's `failed` entries), or ''. */
export function lastErrorCode(timelineLines: readonly string[]): string {
  let code = '';
  for (const line of timelineLines) {
    if (!line.includes('error_code')) continue;
    try {
      const entry = JSON.parse(line) as { error_code?: unknown };
      if (typeof entry.error_code === 'string' && entry.error_code !== '') code = entry.error_code;
    } catch {
      // A malformed entry names no code; the view skips it too.
    }
  }
  return code;
}

/** The id as the task's own tenant sees it: bare for its tenant, `<tenant>/<id>` otherwise. */
function showFor(tenant: string): (scoped: string) => string {
  return (scoped) => {
    const split = splitScopedId(scoped);
    return split.tenant === tenant ? split.id : `${split.tenant}/${split.id}`;
  };
}

function recordJson(view: TaskView, extra: Record<string, unknown>): string {
  return JSON.stringify({ ...view, ...extra });
}

/**
 * The archive point of a final task: its view for its own tenant (as `GET /v1/tasks/:id`
 * answers it), with its payload and result when the capability archives them, each cut at
 * `archiveMaxValueBytes`; a record still past what InfluxDB keeps in one string field gets a
 * shorter error, then fewer timeline entries, then values cut shorter. Undefined for a task that
 * is not final.
 */
export function archivePointOf(
  taskId: string,
  task: TaskRecord,
  timelineLines: readonly string[],
  children: readonly string[],
  settings: ArchiveRecordSettings,
): ArchivedTaskPoint | undefined {
  const ended = endOf(task);
  if (ended === undefined) return undefined;
  const { tenant } = splitScopedId(taskId);
  const view = taskViewOf(taskId, task, timelineLines, {
    show: showFor(tenant),
    children: [...children].sort(),
  });
  const capability = task.capability ?? '';
  const withValues = archivesPayloads(settings, capability);
  if (!withValues) delete view.result;
  let limit = settings.archiveMaxValueBytes;
  let record: string;
  let payloadCut: boolean;
  let resultCut: boolean;
  for (let round = 0; ; round++) {
    const extra: Record<string, unknown> = {};
    payloadCut = false;
    resultCut = false;
    if (withValues) {
      if (task.payload !== undefined && task.payload !== '') {
        const p = cutJsonText(task.payload, limit);
        extra.payload = p.value;
        payloadCut = p.cut;
        if (p.cut) extra.payload_cut = true;
      }
      if (task.result !== undefined) {
        const r = cutJsonText(task.result, limit);
        extra.result = r.value;
        resultCut = r.cut;
        if (r.cut) extra.result_cut = true;
      }
    }
    record = recordJson(view, extra);
    if (Buffer.byteLength(record, 'utf8') <= MAX_ARCHIVE_RECORD_BYTES || round >= 8) break;
    if (view.error !== undefined && view.error.length > SHORT_ERROR_CHARS) {
      view.error = view.error.slice(0, SHORT_ERROR_CHARS);
    } else if (view.timeline.length > 2 * TIMELINE_ENDS) {
      view.timeline = [
        ...view.timeline.slice(0, TIMELINE_ENDS),
        ...view.timeline.slice(-TIMELINE_ENDS),
      ];
    } else {
      limit = Math.floor(limit / 2);
    }
  }
  if (Buffer.byteLength(record, 'utf8') > MAX_ARCHIVE_RECORD_BYTES)
    record = utf8Prefix(record, MAX_ARCHIVE_RECORD_BYTES);
  const created = task.createdAt ?? ended;
  return {
    tenant: tenant === DEFAULT_TENANT ? '' : tenant,
    capability,
    agent_id: task.agentId ?? '',
    status: task.status,
    task_id: taskId,
    attempts: task.attempt ?? 0,
    created_at_ms: created,
    ended_at_ms: ended,
    duration_ms: Math.max(0, ended - created),
    error_code: lastErrorCode(timelineLines),
    parent_task_id: task.parentTaskId ?? '',
    record,
    payload_cut: payloadCut,
    result_cut: resultCut,
  };
}
