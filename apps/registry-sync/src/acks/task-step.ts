import type { RedisClient } from '@agent-reach/service-kit/redis';
import { endSpan, startSpan, type TaskSpan } from '@agent-reach/service-kit/tracing';
import type { Logger } from 'pino';
import {
  Coalescer,
  taskFields,
  type CallbackMessage,
  type ReachKeys,
  type TaskAckMessage,
  type TimelineEntry,
} from '@agent-reach/protocol';
import type { CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import type { OutcomeRecorder } from '../tasks/outcomes.ts';
import type { AckAgentReply } from '../commands/ack-agent.ts';
import { ackTaskScript, type AckTaskItem, type AckTaskReply } from '../commands/ack-task.ts';
import type { AckOutcome } from './ack-outcome.ts';
import type { FailureDecision } from './failure-decision.ts';
import type { SpeedTracker } from './speed-tracker.ts';

/** Settings of the task step. */
export interface TaskStepSettings {
  /** How long a final task and its timeline are kept, seconds (REACH_TASK_RETENTION_S). */
  taskRetentionS: number;
  /** Final tasks go to the archive outbox (REACH_TASK_ARCHIVE), their expiry set once archived. */
  archive?: boolean;
}

/** What the task step works with. */
export interface TaskStepOptions {
  /** A connection where ack-task-n.lua is loaded (`ackTaskScript`). */
  redis: RedisClient;
  keys: ReachKeys;
  events: EventSink;
  /** Publishes a completion on the task's callback topic. */
  callbacks: CallbackPublisher;
  /** What follows a failed attempt. */
  failures: FailureDecision;
  speed: SpeedTracker;
  /** Notes completions in the agents' health windows (failures: TaskOutcomes). */
  health?: OutcomeRecorder | undefined;
  settings: TaskStepSettings;
  logger: Logger;
}

/** What a completion's callback entry is built from, read again for a re-processed ack. */
const STORED_COMPLETION = taskFields(
  'status',
  'callbackTopic',
  'capability',
  'attempt',
  'completedAt',
  'agentId',
  'result',
  'durationMs',
);

/** One ack's task step, with the task it names. */
type AckTaskCall = AckTaskItem & { readonly taskId: string };

/** The agent step of an ack that it applied (ack-agent-3.lua). */
export type AppliedAgentStep = Extract<AckAgentReply, { ok: true }>;

/**
 * Applies a task ack (`received`, `completed`, `failed`) to the task (ack-task-n.lua), then what
 * follows it: its InfluxDB points, the failure decision, or for a completion its health note,
 * its speed and its callback-topic entry. A refusal it returns is counted by the caller. The
 * acks of one tick whose tasks share a task shard go to Redis as one script call.
 */
export class TaskStep {
  private readonly log: Logger;
  private readonly steps: Coalescer<AckTaskCall, AckTaskReply | Error>;

  constructor(private readonly o: TaskStepOptions) {
    this.log = o.logger.child({ module: 'acks' });
    const { redis, keys, settings } = o;
    this.steps = new Coalescer((shard, items) =>
      ackTaskScript.run(redis, {
        // Every task of the call is in one task shard, and so is its archive outbox.
        keys: { outbox: keys.archiveOutbox(Number(shard)) },
        args: { retentionS: settings.taskRetentionS, archive: settings.archive ? '1' : '' },
        moreKeys: items.flatMap((item) => {
          return [keys.task(item.taskId), keys.timeline(item.taskId)];
        }),
        items,
      }),
    );
  }

  /**
   * `step.sentAt` and `step.entryId` are the delivery the agent's pending entry holds (written in
   * the same script as the XADD): the attempt's `sent` stage, which this step copies into
   * the task with the attempt's first ack. `step.placement`, when the ack may take a pooled task,
   * lets this step check the task's constraints against the agent.
   */
  async apply(
    ack: TaskAckMessage,
    at: number,
    step: AppliedAgentStep,
    span?: TaskSpan,
  ): Promise<AckOutcome> {
    const { keys, events } = this.o;
    const { placement } = step;
    // The ordinary stages are fields of the task; a failure is a timeline list entry as well.
    const failure: TimelineEntry | undefined =
      ack.stage === 'failed'
        ? {
            stage: 'failed',
            at,
            agent_id: ack.agent_id,
            attempt: ack.attempt,
            ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
            ...(ack.error !== undefined ? { error: ack.error } : {}),
            ...(ack.error_code !== undefined ? { error_code: ack.error_code } : {}),
          }
        : undefined;
    // A receipt the worker folded into this ack: received when it read the entry, by Redis' clock.
    const foldedAt = ack.received_ago_ms !== undefined ? at - ack.received_ago_ms : undefined;
    const item: AckTaskCall = {
      taskId: ack.task_id,
      stage: ack.stage,
      attempt: ack.attempt,
      agentId: ack.agent_id,
      epoch: ack.epoch,
      at,
      result: ack.result ?? '',
      error: ack.error ?? '',
      durationMs: ack.duration_ms ?? '',
      failureEntry: failure ? JSON.stringify(failure) : '',
      foldedReceivedAt: foldedAt ?? '',
      sentAt: step.sentAt > 0 ? step.sentAt : '',
      messageId: step.sentAt > 0 ? step.entryId : '',
      placed: placement ? 1 : '',
      region: placement?.region ?? '',
      tags: placement ? JSON.stringify(placement.tags) : '',
      capabilities: placement ? JSON.stringify(placement.capabilities) : '',
    };
    const res = await this.steps.call(
      String(keys.taskShardOf(ack.task_id)),
      item,
      (ack.result?.length ?? 0) + (ack.error?.length ?? 0),
    );
    if (res instanceof Error) throw res;
    if (!res.ok) {
      if (res.refusal === 'already_final') {
        // Already applied: a re-processed entry still makes sure what follows it happened.
        if (ack.stage === 'completed') await this.publishStored(ack.task_id);
        if (ack.stage === 'failed') await this.o.failures.decide(ack);
        return { applied: false, reason: 'duplicate' };
      }
      const reason = res.refusal;
      this.log.warn(
        { task_id: ack.task_id, agent_id: ack.agent_id, attempt: ack.attempt, reason },
        'ack refused',
      );
      return { applied: false, reason };
    }
    const { capability, callbackTopic: topic, traceId, receivedAt, attempt, final } = res;
    const sentAt = res.sentAt > 0 ? res.sentAt : step.sentAt;
    if (res.foldedRecorded) {
      events.write({
        stage: 'received',
        capability,
        agent_id: ack.agent_id,
        task_id: ack.task_id,
        attempt,
        at: receivedAt,
        ...(sentAt > 0 ? { latency_ms: Math.max(0, receivedAt - sentAt) } : {}),
        ...(traceId ? { trace_id: traceId } : {}),
      });
    }
    events.write({
      stage: ack.stage,
      capability,
      agent_id: ack.agent_id,
      task_id: ack.task_id,
      attempt,
      at,
      ...(ack.stage === 'received' && sentAt > 0 ? { latency_ms: at - sentAt } : {}),
      ...(ack.stage !== 'received' && receivedAt > 0 ? { latency_ms: at - receivedAt } : {}),
      ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
      ...(traceId ? { trace_id: traceId } : {}),
      ...(ack.error_code !== undefined ? { error_code: ack.error_code } : {}),
    });
    if (ack.stage === 'failed') {
      await this.o.failures.decide({ ...ack, attempt });
      return { applied: true, final: false };
    }
    if (ack.stage === 'completed') {
      const { speed } = this.o;
      this.o.health?.record(
        ack.agent_id,
        speed.isSlow(capability, ack.duration_ms) ? 'slow' : 'completed',
      );
      // Both need only what the task step returned: one round trip for the two.
      await Promise.all([
        step.speedTracked ? undefined : speed.track(ack.agent_id, capability, ack.duration_ms),
        final && topic
          ? traceCallback(span, () =>
              this.o.callbacks.publish(topic, {
                task_id: ack.task_id,
                status: 'completed',
                capability,
                agent_id: ack.agent_id,
                attempt,
                completed_at: at,
                ...(ack.result !== undefined ? { result: ack.result } : {}),
                ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
              }),
            )
          : undefined,
      ]);
    }
    return { applied: true, final };
  }

  /** Publishes a completed task's stored result again (once-only marks keep it to one entry). */
  private async publishStored(taskId: string): Promise<void> {
    const { redis, keys, callbacks } = this.o;
    const task = STORED_COMPLETION.decode(
      await redis.hmget(keys.task(taskId), ...STORED_COMPLETION.fields),
    );
    const topic = task.callbackTopic;
    if (!topic || task.status !== 'completed') return;
    const msg: CallbackMessage = {
      task_id: taskId,
      status: 'completed',
      capability: task.capability ?? '',
      agent_id: task.agentId ?? '',
      attempt: task.attempt ?? 0,
      completed_at: task.completedAt ?? 0,
      ...(task.result !== undefined ? { result: task.result } : {}),
      ...(task.durationMs !== undefined ? { duration_ms: task.durationMs } : {}),
    };
    await callbacks.publish(topic, msg);
  }
}

/** The callback entry's publication as a `callback` span under the `apply` span, when there is one. */
function traceCallback<T>(apply: TaskSpan | undefined, publish: () => Promise<T>): Promise<T> {
  if (apply === undefined) return publish();
  const span = startSpan('callback', { parent: apply.traceparent, kind: 'producer' });
  return publish().then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      endSpan(span, err);
      throw err;
    },
  );
}
