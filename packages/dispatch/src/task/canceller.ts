import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { ControlField, WORKER_GROUP, watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import type { CallbackPublisher } from '../callbacks.ts';

/** An agent's control stream keeps about this many notices. */
const CONTROL_MAXLEN = 1000;

/** What cancelling needs. */
export interface TaskCancellerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  callbacks: CallbackPublisher;
  events: EventSink;
  logger: Logger;
  /** How long a cancelled task stays readable, seconds (read at each cancel). */
  retentionS: () => number;
}

/** What a cancel did: `unknown` (no such task), `final` (completed or dead already), or done. */
export type CancelOutcome =
  | { kind: 'cancelled'; taskId: string; children: number }
  | { kind: 'unknown' }
  | { kind: 'final'; status: string };

/** cancel-2.lua's reply. */
interface CancelReply {
  code: number;
  before: string;
  agentId: string;
  attempt: number;
  epoch: number;
  topic: string;
  capability: string;
  messageId: string;
  stream: string;
  receivedAt: number;
  traceId: string;
}

function decodeCancelReply(raw: readonly unknown[]): CancelReply {
  const [code, before, agentId, attempt, epoch, topic, capability, messageId, stream, rec, trace] =
    raw as [
      number,
      string?,
      string?,
      number?,
      number?,
      string?,
      string?,
      string?,
      string?,
      number?,
      string?,
    ];
  return {
    code,
    before: before ?? '',
    agentId: agentId ?? '',
    attempt: attempt ?? 0,
    epoch: epoch ?? 0,
    topic: topic ?? '',
    capability: capability ?? '',
    messageId: messageId ?? '',
    stream: stream ?? '',
    receivedAt: rec ?? 0,
    traceId: trace ?? '',
  };
}

/**
 * Cancels tasks (`POST /v1/tasks/:id/cancel`): the task is final at once (cancel-2.lua), its
 * callback topic gets one `cancelled` item and the event goes to InfluxDB; what still holds it
 * is cleared — its due entry (waiting for a retry or a start), its pool entry (waiting for a
 * pull agent), and the agent it was delivered to is told on its control stream, which the SDK
 * reads even with every slot busy, to abort the handler (or not to start it). The agent's slot
 * frees when its late ack comes (refused, recorded as `stopped`) or its execution lease lapses.
 * The task's children (submitted while handling it) are cancelled with it.
 */
export class TaskCanceller {
  private readonly log: Logger;

  constructor(private readonly o: TaskCancellerOptions) {
    this.log = o.logger.child({ module: 'cancel' });
  }

  /** Cancels `taskId` (its scoped id) for `by` (the key id), and its children. */
  async cancel(taskId: string, by: string): Promise<CancelOutcome> {
    const { redis, keys } = this.o;
    const now = Date.now();
    const reply = decodeCancelReply(
      await redis.reachCancel(
        keys.task(taskId),
        keys.timeline(taskId),
        now,
        by,
        this.o.retentionS(),
      ),
    );
    if (reply.code === -1) return { kind: 'unknown' };
    if (reply.code === -7) return { kind: 'final', status: 'completed or dead' };
    if (reply.code === 0) await this.clear(taskId, by, now, reply);
    let children = 0;
    for (const child of await redis.smembers(keys.children(taskId))) {
      const done = await this.cancel(child, by);
      if (done.kind === 'cancelled') children += 1 + done.children;
    }
    return { kind: 'cancelled', taskId, children };
  }

  private async clear(taskId: string, by: string, now: number, r: CancelReply): Promise<void> {
    const { redis, keys } = this.o;
    // The task's own entry (a retry's backoff) and a delayed task's hold (its `#` member).
    const due = keys.dueOf(taskId);
    const clearing = slotPipeline(redis).add(due, (p) =>
      p.zrem(due, taskId, watchdogMember(taskId)),
    );
    const held = r.before === 'accepted' || r.before === 'sent' || r.before === 'received';
    if (held && r.agentId !== '') {
      const control = keys.control(r.agentId);
      clearing.add(control, (p) =>
        p.xadd(
          control,
          'MAXLEN',
          '~',
          CONTROL_MAXLEN,
          '*',
          ControlField.kind,
          'cancel',
          ControlField.taskId,
          taskId,
          ControlField.attempt,
          r.attempt,
        ),
      );
    }
    await clearing.exec();
    if (held && r.agentId === '' && r.stream !== '' && r.messageId !== '') {
      // Waiting in a capability pool: no pull agent will read it now.
      await redis
        .pipeline()
        .xack(r.stream, WORKER_GROUP, r.messageId)
        .xdel(r.stream, r.messageId)
        .exec();
    }
    this.log.info(
      { task_id: taskId, by, status_before: r.before, agent_id: r.agentId || undefined },
      'task cancelled',
    );
    this.o.events.write({
      stage: 'cancelled',
      capability: r.capability,
      // A task no agent held (delayed, waiting for a retry) has none: a tag cannot be empty.
      agent_id: r.agentId || 'none',
      task_id: taskId,
      attempt: r.attempt,
      at: now,
      reason: by,
      ...(r.traceId ? { trace_id: r.traceId } : {}),
    });
    if (r.topic !== '')
      await this.o.callbacks.publish(r.topic, {
        task_id: taskId,
        status: 'cancelled',
        capability: r.capability,
        agent_id: r.agentId,
        attempt: r.attempt,
        completed_at: now,
        error: `cancelled by ${by}`,
      });
  }
}
