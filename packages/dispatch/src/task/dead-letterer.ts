import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { followUpMember, taskFields, watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import type { CallbackPublisher } from '../callbacks.ts';
import type { FleetEventLog } from '../fleet-event-log.ts';
import { noticeStage } from '../send/stage-notice.ts';
import { constraintArgs, type TaskSpec } from './task-spec.ts';
import { writeFollowUp } from './follow-up.ts';
import { rejectScript } from './reject.ts';

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

/** What announcing a death again reads of the task hash. */
const DEATH = taskFields(
  'status',
  'attempt',
  'capability',
  'callbackTopic',
  'deadReason',
  'agentId',
  'error',
  'traceId',
  'deadAt',
);

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
  /** A task dead on arrival goes to the archive outbox (REACH_TASK_ARCHIVE). @default off */
  archive?: () => boolean;
}

/**
 * The one writer of the `dead` stage beyond the task's own state: the dead-letter index, the
 * fleet event, the `dead` event, the log line and the caller's callback notice. The scripts that
 * move a task to `dead` (retry-3.lua, reject-3.lua, beside this file) record the state and
 * timeline; every death is announced here, whoever decided it.
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
    const followUp = await writeFollowUp(redis, keys, spec.taskId);
    const created = await rejectScript.run(redis, {
      keys: {
        task: keys.task(spec.taskId),
        timeline: keys.timeline(spec.taskId),
        outbox: keys.archiveOutbox(keys.taskShardOf(spec.taskId)),
      },
      args: {
        taskId: spec.taskId,
        capability: spec.capability,
        payload: spec.payload,
        callbackTopic: spec.callbackTopic,
        traceId: spec.traceId,
        reason,
        retentionS: this.o.dlqRetentionS(),
        archive: this.o.archive?.() ? '1' : '',
      },
      items: constraintArgs(spec),
    });
    if (!created) {
      await followUp.undo();
      return false;
    }
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

  /**
   * Indexes the dead task for the DLQ and tells everyone who watches. Its due entries go last:
   * whoever moved it to `dead` wrote its follow-up entry (`followUpMember`) first, so an
   * announcement that stops midway leaves that entry, and registry-sync announces the death
   * again when it comes due (`announceAgain`). Each step is safe to repeat; the callback notice's
   * mark (per attempt) publishes it once.
   */
  async announce(d: DeadTask): Promise<void> {
    const { redis, keys } = this.o;
    await redis.zadd(keys.dlq(), d.at, d.taskId);
    // Counted by reason for alerts (`reach_store_counter{name="dead_lettered:loop"}`); an
    // announcement repeated after a stop midway counts twice, which an alert on growth tolerates.
    await redis.hincrby(keys.stats(), `dead_lettered:${d.reason}`, 1);
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
    await redis.zrem(
      keys.dueOf(d.taskId),
      d.taskId,
      watchdogMember(d.taskId),
      followUpMember(d.taskId),
    );
  }

  /**
   * A dead task's follow-up entry came due: its announcement may have stopped midway (a process
   * killed, a Cluster master lost). It is announced again from what the task holds, with the
   * time it died. False when the task is not dead (nothing done).
   */
  async announceAgain(taskId: string): Promise<boolean> {
    const { redis, keys } = this.o;
    const task = DEATH.decode(await redis.hmget(keys.task(taskId), ...DEATH.fields));
    if (task.status !== 'dead') return false;
    const { agentId, error } = task;
    await this.announce({
      taskId,
      capability: task.capability ?? '',
      attempt: task.attempt ?? 0,
      reason: task.deadReason ?? '',
      ...(agentId ? { agentId } : {}),
      ...(error ? { error } : {}),
      callbackTopic: task.callbackTopic ?? '',
      traceId: task.traceId ?? '',
      at: task.deadAt ?? 0,
    });
    this.log.info({ task_id: taskId }, 'death announced again after its announcement stopped');
    return true;
  }
}
