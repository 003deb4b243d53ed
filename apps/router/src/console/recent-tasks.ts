import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeTaskRecord,
  FailureCode,
  type ReachKeys,
  type TaskRecord,
  type TimelineEntry,
} from '@agent-reach/protocol';
import { parsePendingEntry, taskTimeline, type PendingEntry } from '@agent-reach/dispatch';
import type { TaskEvent } from '@agent-reach/events';

/**
 * The ids of the tasks this router delivered most recently, newest last, in a fixed-size ring:
 * what the console samples for latency charts and success rates without scanning Redis.
 */
export class RecentTasks {
  private readonly ids: string[];
  private next = 0;
  private count = 0;

  constructor(private readonly capacity = 1000) {
    this.ids = new Array<string>(capacity);
  }

  /** Remembers a task when it is sent (the event sink's observer calls this). O(1). */
  note(event: TaskEvent): void {
    if (event.stage !== 'sent') return;
    this.ids[this.next] = event.task_id;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  /** Up to `n` ids, newest first. */
  newest(n: number): string[] {
    const out: string[] = [];
    for (let i = 1; i <= Math.min(n, this.count); i++) {
      const id = this.ids[(this.next - i + this.capacity) % this.capacity];
      if (id !== undefined) out.push(id);
    }
    return out;
  }
}

/** Stage latencies of one recent task, for the console's charts. */
export interface LatencyPoint {
  task_id: string;
  capability: string;
  agent_id: string;
  status: string;
  /** When the (last) attempt was sent, epoch ms. */
  at: number;
  /** accepted → sent, ms. */
  delivery_ms?: number;
  /** sent → received, ms. */
  receipt_ms?: number;
  /** received → completed or failed, ms. */
  execution_ms?: number;
}

/** Results per agent among the sampled tasks. */
export interface AgentOutcomes {
  completed: number;
  failed: number;
  /** The failures by their `error_code` (HANDLER_ERROR for one without). */
  failures_by_code: Record<string, number>;
}

/** What one read of recent task timelines gives. */
export interface TaskSample {
  points: LatencyPoint[];
  agents: Map<string, AgentOutcomes>;
}

type Reply = [Error | null, unknown][];

/** Latencies of a task's last attempt, and each agent's completions and failures. */
export function summarise(
  taskId: string,
  fields: (string | null)[],
  timeline: TimelineEntry[],
  agents: Map<string, AgentOutcomes>,
): LatencyPoint | undefined {
  const [status, capability] = fields;
  if (!status) return undefined;
  const entries = [...timeline].sort((a, b) => a.at - b.at);
  for (const e of entries) {
    if ((e.stage !== 'completed' && e.stage !== 'failed') || !e.agent_id) continue;
    const o = agents.get(e.agent_id) ?? { completed: 0, failed: 0, failures_by_code: {} };
    o[e.stage]++;
    if (e.stage === 'failed') {
      const code = e.error_code ?? FailureCode.handlerError;
      o.failures_by_code[code] = (o.failures_by_code[code] ?? 0) + 1;
    }
    agents.set(e.agent_id, o);
  }
  const sent = entries.filter((e) => e.stage === 'sent').at(-1);
  if (!sent) return undefined;
  const attempt = sent.attempt;
  const after = entries.filter(
    (e) =>
      e.at >= sent.at &&
      (attempt === undefined || e.attempt === undefined || e.attempt === attempt),
  );
  const accepted = entries.find((e) => e.stage === 'accepted');
  const received = after.find((e) => e.stage === 'received');
  const done = after.find((e) => e.stage === 'completed' || e.stage === 'failed');
  const point: LatencyPoint = {
    task_id: taskId,
    capability: capability ?? '',
    agent_id: sent.agent_id ?? '',
    status,
    at: sent.at,
  };
  if (accepted && (attempt ?? 1) === 1) point.delivery_ms = Math.max(0, sent.at - accepted.at);
  if (received) point.receipt_ms = Math.max(0, received.at - sent.at);
  if (received && done) point.execution_ms = Math.max(0, done.at - received.at);
  return point;
}

/** What a task sampler needs. */
export interface TaskSamplerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  recent: RecentTasks;
  /** @default 200 */
  maxTasks?: number;
  /** @default 1000 */
  cacheMs?: number;
}

/**
 * Reads the timelines of the tasks this router sent most recently — at most `maxTasks`, in one
 * pipeline — and derives their stage latencies and each agent's recent outcomes. A read is
 * shared by callers within `cacheMs`, so any number of open consoles cost one read a second.
 */
export class TaskSampler {
  private readonly maxTasks: number;
  private readonly cacheMs: number;
  private cached: { at: number; sample: Promise<TaskSample> } | undefined;

  constructor(private readonly o: TaskSamplerOptions) {
    this.maxTasks = o.maxTasks ?? 200;
    this.cacheMs = o.cacheMs ?? 1000;
  }

  /** The current sample. */
  sample(): Promise<TaskSample> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < this.cacheMs) return this.cached.sample;
    const sample = this.read();
    this.cached = { at: now, sample };
    void sample.catch(() => {
      if (this.cached?.sample === sample) this.cached = undefined;
    });
    return sample;
  }

  private async read(): Promise<TaskSample> {
    const ids = this.o.recent.newest(this.maxTasks);
    const agents = new Map<string, AgentOutcomes>();
    if (ids.length === 0) return { points: [], agents };
    const pipeline = slotPipeline(this.o.redis);
    for (const id of ids)
      pipeline.add(this.o.keys.task(id), (p) =>
        p.hgetall(this.o.keys.task(id)).lrange(this.o.keys.timeline(id), 0, -1),
      );
    const replies = (await pipeline.exec()) as Reply;
    const read = ids.map((id, i) => {
      const [fErr, hash] = replies[2 * i] ?? [null, {}];
      const [tErr, lines] = replies[2 * i + 1] ?? [null, []];
      const task = fErr || tErr ? undefined : decodeTaskRecord(hash as Record<string, string>);
      return task ? { id, task, lines: lines as string[] } : undefined;
    });
    // A task not acknowledged yet has its `sent` stage in its agent's pending entry.
    const waiting = read.filter(
      (r): r is { id: string; task: TaskRecord; lines: string[] } =>
        r?.task.status === 'accepted' && !!r.task.agentId && !((r.task.sentAt ?? 0) > 0),
    );
    const deliveries = new Map<string, PendingEntry>();
    if (waiting.length > 0) {
      const lookup = slotPipeline(this.o.redis);
      for (const r of waiting) {
        const pending = this.o.keys.pending(r.task.agentId ?? '');
        lookup.add(pending, (p) => p.hget(pending, r.id));
      }
      const found = (await lookup.exec()) as Reply;
      waiting.forEach((r, i) => {
        const [err, value] = found[i] ?? [null, null];
        const entry =
          !err && typeof value === 'string' ? parsePendingEntry(r.id, value) : undefined;
        if (entry) deliveries.set(r.id, entry);
      });
    }
    const points: LatencyPoint[] = [];
    for (const r of read) {
      if (!r) continue;
      const { status, timeline } = taskTimeline(r.task, r.lines, deliveries.get(r.id));
      const point = summarise(r.id, [status, r.task.capability ?? null], timeline, agents);
      if (point) points.push(point);
    }
    points.sort((a, b) => a.at - b.at);
    return { points, agents };
  }
}
