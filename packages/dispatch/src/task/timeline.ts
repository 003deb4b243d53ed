import type { TaskRecord, TaskStatus, TimelineEntry } from '@agent-reach/protocol';
import { byStageTime } from '@agent-reach/events';
import type { PendingEntry } from './pending-entry.ts';

/** Why an agent was chosen, kept with the `sent` stage of the timeline. */
export interface RoutingRecord {
  score?: number;
  load?: number;
  candidates?: number;
  runner_up?: string;
  runner_up_score?: number;
  snapshot_age_ms?: number;
  reason?: string;
  previous_agent?: string;
  /** The capability whose pool the task was put in. */
  pool?: string;
  /**
   * The chosen agent's status when it was not HEALTHY: `DEGRADED` (no HEALTHY agent had room) or
   * `SUSPECT` (none was a candidate).
   */
  agent_status?: string;
  /** The capability the task was sent to, when it was one of its fallbacks (`fallback` true). */
  capability?: string;
  /** The task's own capability had no live agent: it went to its fallback `capability`. */
  fallback?: boolean;
}

/** The routing record's positional fields in the task hash's `route` field, in this order. */
const ROUTE_NUMBERS = ['score', 'load', 'candidates', 'snapshot_age_ms'] as const;
/** Its optional text fields, written `|name=value` after the positional ones. */
const ROUTE_TEXTS = ['reason', 'previous_agent', 'pool', 'agent_status'] as const;

/**
 * The routing record as the task hash's `route` field:
 * `<score>|<load>|<candidates>|<snapshot_age_ms>|<runner_up>|<runner_up_score>`, then
 * `|reason=…`, `|previous_agent=…`, `|pool=…`, `|agent_status=…`, `|fallback=<capability>` when set
 * (none of them holds a `|`). Short on
 * purpose: one hash field over 64 bytes (`hash-max-listpack-value`) turns the whole task hash
 * from a listpack into a hashtable, three times the memory. Only Node reads it.
 */
export function packRoute(r: RoutingRecord): string {
  const num = (v: number | undefined) => (v === undefined ? '' : String(v));
  let text = [
    ...ROUTE_NUMBERS.map((k) => num(r[k])),
    r.runner_up ?? '',
    num(r.runner_up_score),
  ].join('|');
  for (const k of ROUTE_TEXTS) if (r[k] !== undefined) text += `|${k}=${r[k]}`;
  if (r.fallback && r.capability) text += `|fallback=${r.capability}`;
  return text;
}

/** Reads `packRoute`'s text back; fields left empty are left out. */
export function unpackRoute(text: string): RoutingRecord {
  const parts = text.split('|');
  const out: RoutingRecord = {};
  ROUTE_NUMBERS.forEach((k, i) => {
    const v = parts[i];
    if (v !== undefined && v !== '' && Number.isFinite(Number(v))) out[k] = Number(v);
  });
  const runnerUp = parts[4];
  const runnerUpScore = parts[5];
  if (runnerUp) {
    out.runner_up = runnerUp;
    if (runnerUpScore && Number.isFinite(Number(runnerUpScore)))
      out.runner_up_score = Number(runnerUpScore);
  }
  for (const part of parts.slice(6)) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq) as (typeof ROUTE_TEXTS)[number];
    if (eq > 0 && ROUTE_TEXTS.includes(key)) out[key] = part.slice(eq + 1);
    else if (part.startsWith('fallback=')) {
      out.capability = part.slice(eq + 1);
      out.fallback = true;
    }
  }
  return out;
}

/** A task's status and timeline as the API shows them. */
export interface TaskTimeline {
  status: TaskStatus;
  timeline: TimelineEntry[];
}

type Entry = TimelineEntry & { routing?: RoutingRecord; route?: string };

/** A `sent` entry: its routing record unpacked; a pooled task's has no agent. */
function sentEntry(e: Entry): Entry {
  const { route, ...rest } = e;
  const routing = route !== undefined ? unpackRoute(route) : rest.routing;
  if (routing?.pool !== undefined) delete rest.agent_id;
  if (routing && Object.keys(routing).length > 0) rest.routing = routing;
  return rest;
}

function parseLine(line: string): Entry | undefined {
  try {
    const e = JSON.parse(line) as Entry;
    if (!e || typeof e.at !== 'number' || typeof e.stage !== 'string') return undefined;
    return e.stage === 'sent' ? sentEntry(e) : e;
  } catch {
    return undefined;
  }
}

/**
 * A task's status and timeline from what Redis holds. The current attempt's ordinary stages come
 * from the task hash's fields — `created_at` (accepted), `sent_at` with `message_id` and `route`
 * (sent), `received_at`, `completed_at` with `duration_ms` — and, before the task step of its
 * first ack copied `sent_at`, from the agent's pending entry for the attempt (`pending`, read by
 * the caller when the task is `accepted`): the task is then `sent`. The timeline list holds only
 * exceptional stages (retried, failed, dead, replayed) and the stages of earlier attempts, which
 * the scripts that end an attempt move there. Stages come in time order, ties in lifecycle order.
 */
export function taskTimeline(
  task: TaskRecord,
  lines: readonly string[],
  pending?: PendingEntry,
): TaskTimeline {
  let status: TaskStatus = task.status;
  const attempt = task.attempt ?? 0;
  const agentId = task.agentId ?? '';
  const entries: Entry[] = [];
  for (const line of lines) {
    const e = parseLine(line);
    if (e) entries.push(e);
  }
  const createdAt = task.createdAt ?? 0;
  // A task of a priority above the default says so at its acceptance.
  const priority = task.priority ?? 0;
  if (createdAt > 0)
    entries.push({ stage: 'accepted', at: createdAt, ...(priority > 0 ? { priority } : {}) });
  let sentAt = task.sentAt ?? 0;
  let messageId = task.messageId ?? '';
  if (sentAt === 0 && status === 'accepted' && pending && pending.attempt === attempt) {
    // Delivered; its first ack has not reached the task yet.
    status = 'sent';
    sentAt = pending.sentAt;
    messageId = pending.messageId;
  }
  if (sentAt > 0) {
    entries.push(
      sentEntry({
        stage: 'sent',
        at: sentAt,
        attempt,
        message_id: messageId,
        ...(agentId ? { agent_id: agentId } : {}),
        ...(task.route !== undefined ? { route: task.route } : {}),
      }),
    );
  }
  const receivedAt = task.receivedAt ?? 0;
  if (receivedAt > 0)
    entries.push({ stage: 'received', at: receivedAt, agent_id: agentId, attempt });
  const completedAt = task.completedAt ?? 0;
  if (status === 'completed' && completedAt > 0) {
    entries.push({
      stage: 'completed',
      at: completedAt,
      agent_id: agentId,
      attempt,
      ...(task.durationMs !== undefined ? { duration_ms: task.durationMs } : {}),
    });
  }
  // created_at is the router's reading of Redis time (redis-clock.ts), which may be a little
  // late: acceptance comes first all the same.
  const accepted = entries.find((e) => e.stage === 'accepted');
  if (accepted) for (const e of entries) if (e.at < accepted.at) accepted.at = e.at;
  // Stages are written by different processes; order by time, then by lifecycle order.
  entries.sort(byStageTime);
  return { status, timeline: entries };
}
