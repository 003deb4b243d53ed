import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import type { CallbackPublisher } from '../callbacks.ts';
import type { FleetEventLog } from '../fleet-event-log.ts';
import { constraintArgs, type TaskSpec } from '../task/task-spec.ts';
import { noticeStage } from './stage-notice.ts';

/** A task whose state a script just moved to `dead`. */
export interface DeadTask {
  taskId: string;
  capability: string;
  /** The attempt it died at (0: dead on arrival). */
  attempt: number;
  reason: string;
  /** The agent of the last attempt, if any. */
  agentId?: string;
  error?: string;
  /** '' when the caller gave none. */
  callbackTopic: string;
  traceId: string;
  /** When it died, epoch ms. */
  at: number;
}

/** What announcing a death needs. */
export interface DeadLettererOptions {
  redis: RedisClient;
  keys: ReachKeys;
  events: EventSink;
  callbacks: CallbackPublisher;
  fleet: FleetEventLog;
  logger: Logger;
  /** How long a dead task is kept, seconds (read at each use: the published value may change). */
  dlqRetentionS: () => number;
}

/**
 * The one writer of the `dead` stage beyond the task's own state: the dead-letter index, the
 * fleet event, the `dead` event, the log line and the caller's callback notice. The scripts that
 * move a task to `dead` (retry-2.lua, reject-2.lua) record the state and timeline; every death
 * is announced here, whoever decided it.
 */
export class DeadLetterer {
  private readonly log: Logger;

  constructor(private readonly o: DeadLettererOptions) {
    this.log = o.logger.child({ module: 'dead-letters' });
  }

  /**
   * Records a submission that is dead on arrival (a loop) with its constraints, so it can be
   * replayed, and announces it. False when the task_id already exists (nothing written).
   */
  async deadOnArrival(spec: TaskSpec, reason: string): Promise<boolean> {
    const { redis, keys } = this.o;
    const created = await redis.reachReject(
      keys.task(spec.taskId),
      keys.timeline(spec.taskId),
      spec.taskId,
      spec.capability,
      spec.payload,
      spec.callbackTopic,
      spec.traceId,
      reason,
      this.o.dlqRetentionS(),
      ...constraintArgs(spec),
    );
    if (created !== 1) return false;
    await this.announce({
      taskId: spec.taskId,
      capability: spec.capability,
      attempt: 0,
      reason,
      callbackTopic: spec.callbackTopic,
      traceId: spec.traceId,
      at: Date.now(),
    });
    return true;
  }

  /** Indexes the dead task for the DLQ and tells everyone who watches. */
  async announce(d: DeadTask): Promise<void> {
    const { redis, keys } = this.o;
    const due = keys.dueOf(d.taskId);
    await slotPipeline(redis)
      .add(keys.dlq(), (p) => p.zadd(keys.dlq(), d.at, d.taskId))
      .add(due, (p) => p.zrem(due, d.taskId, watchdogMember(d.taskId)))
      .exec();
    const trace = d.traceId ? { trace_id: d.traceId } : {};
    this.log.warn(
      {
        task_id: d.taskId,
        ...trace,
        attempt: d.attempt,
        reason: d.reason,
        ...(d.error ? { error: d.error } : {}),
      },
      'task dead-lettered',
    );
    noticeStage(this.o.fleet, this.o.events, { stage: 'dead', ...d });
    if (d.callbackTopic) {
      await this.o.callbacks.publish(d.callbackTopic, {
        task_id: d.taskId,
        status: 'dead',
        capability: d.capability,
        agent_id: d.agentId ?? '',
        attempt: d.attempt,
        error: d.reason,
        completed_at: d.at,
      });
    }
  }
}
