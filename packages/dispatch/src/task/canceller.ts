import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  ControlField,
  followUpMember,
  WORKER_GROUP,
  watchdogMember,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import type { CallbackPublisher } from '../callbacks.ts';
import { cancelScript, type CancelledTask, type CancelReply } from './cancel.ts';
import { writeFollowUp } from './follow-up.ts';
import { WaitingRoom } from '../room/waiting-room.ts';

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
  /** A cancelled task goes to the archive outbox (REACH_TASK_ARCHIVE). @default off */
  archive?: () => boolean;
}

/**
 * What a cancel did: `cancelled` (now or before), `unknown` (no such task), or `final`: the task
 * completed or was dead-lettered already (cancel-3.lua does not say which).
 */
export type CancelOutcome =
  { kind: 'cancelled'; taskId: string; children: number } | { kind: 'unknown' } | { kind: 'final' };

/**
 * Cancels tasks (`POST /v1/tasks/:id/cancel`): the task is final at once (cancel-3.lua), its
 * callback topic gets one `cancelled` item and the event goes to InfluxDB; what still holds it
 * is cleared — its due entry (waiting for a retry or a start), its pool entry (waiting for a
 * pull agent), and the agent it was delivered to is told on its control stream, which the SDK
 * reads even with every slot busy, to abort the handler (or not to start it). The agent's slot
 * frees when its late ack comes (refused, recorded as `stopped`) or its execution lease lapses.
 * The task's children (submitted while handling it) are cancelled with it.
 *
 * The cancel and its follow-up touch keys in several slots, so no one step covers them. A
 * follow-up entry written first (`writeFollowUp`) is dropped only
 * once the follow-up is done: a canceller that fails in between (a router killed, a Cluster master
 * lost) leaves it to registry-sync (`resume`); a cancel that took effect answers as cancelled even
 * when its follow-up failed. Every step of the follow-up is idempotent — the callback's mark lets
 * it be published once — so it may run twice; a cancel of a cancelled task runs it again too.
 */
export class TaskCanceller {
  private readonly log: Logger;
  private readonly room: WaitingRoom;

  constructor(private readonly o: TaskCancellerOptions) {
    this.room = new WaitingRoom(o.redis, o.keys);
    this.log = o.logger.child({ module: 'cancel' });
  }

  /** Cancels `taskId` (its scoped id) for `by` (the key id), and its children. */
  async cancel(taskId: string, by: string): Promise<CancelOutcome> {
    const followUp = await writeFollowUp(this.o.redis, this.o.keys, taskId);
    const reply = await this.run(taskId, by, false);
    if (!reply.ok) {
      // Nothing to follow up: the entry goes unless an earlier cancel's is still pending.
      await followUp.undo();
      return reply.refusal === 'unknown_task' ? { kind: 'unknown' } : { kind: 'final' };
    }
    try {
      return { kind: 'cancelled', taskId, children: await this.followUp(taskId, reply) };
    } catch (err: unknown) {
      // The cancel took effect; its follow-up entry has the rest done (children included).
      this.log.warn(
        { err, task_id: taskId },
        'task cancelled; its follow-up failed and is left to registry-sync',
      );
      return { kind: 'cancelled', taskId, children: 0 };
    }
  }

  /**
   * registry-sync's side: a follow-up entry came due, so a cancel of `taskId` may have stopped
   * midway. A cancelled task gets its follow-up (again), which drops the entry. False, with
   * nothing done, for a task that is not cancelled (the caller drops the entry then).
   */
  async resume(taskId: string): Promise<boolean> {
    const reply = await this.run(taskId, '', true);
    if (!reply.ok) return false;
    await this.followUp(taskId, reply);
    this.log.info({ task_id: taskId }, 'cancellation followed up after its canceller stopped');
    return true;
  }

  private run(taskId: string, by: string, resume: boolean): Promise<CancelReply> {
    const { redis, keys } = this.o;
    return cancelScript.run(redis, {
      keys: {
        task: keys.task(taskId),
        timeline: keys.timeline(taskId),
        outbox: keys.archiveOutbox(keys.taskShardOf(taskId)),
      },
      args: {
        now: Date.now(),
        by,
        retentionS: this.o.retentionS(),
        mode: resume ? 'resume' : '',
        archive: this.o.archive?.() ? '1' : '',
      },
    });
  }

  /**
   * What a cancel leaves to do, each step safe to repeat: clear what holds the task, record the
   * event, publish the callback, cancel the children, and last drop the due entries (its
   * follow-up's with them). Returns how many children were cancelled.
   */
  private async followUp(taskId: string, r: CancelledTask): Promise<number> {
    const { redis, keys } = this.o;
    const by = r.cancelledBy;
    const held = r.before === 'accepted' || r.before === 'sent' || r.before === 'received';
    if (held && r.agentId !== '') {
      await redis.xadd(
        keys.control(r.agentId),
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
      );
      // An endpoint agent's relay listens here rather than blocking on every control stream.
      await redis.spublish(keys.wake(r.agentId), 'c');
    }
    if (held && r.agentId === '' && r.stream !== '' && r.messageId !== '') {
      // Waiting in a capability pool: no pull agent will read it now.
      await redis
        .pipeline()
        .xack(r.stream, WORKER_GROUP, r.messageId)
        .xdel(r.stream, r.messageId)
        .exec();
    }
    // Waiting in its capability's waiting room: it leaves it (a drainer that took it meanwhile
    // finds it cancelled and drops it).
    if (r.before === 'queued') await this.room.leave(r.capability, taskId);
    if (r.now)
      this.log.info(
        { task_id: taskId, by, status_before: r.before, agent_id: r.agentId || undefined },
        'task cancelled',
      );
    // At the cancel's own time: written again, the point is the same one.
    this.o.events.write({
      stage: 'cancelled',
      capability: r.capability,
      // A task no agent held (delayed, waiting for a retry) has none: a tag cannot be empty.
      agent_id: r.agentId || 'none',
      task_id: taskId,
      attempt: r.attempt,
      at: r.cancelledAt,
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
        completed_at: r.cancelledAt,
        error: `cancelled by ${by}`,
      });
    let children = 0;
    for (const child of await redis.smembers(keys.children(taskId))) {
      const done = await this.cancel(child, by);
      if (done.kind === 'cancelled') children += 1 + done.children;
    }
    // The task's own entry (a retry's backoff), a delayed task's hold (its `#` member), and
    // this follow-up's entry, now done.
    await redis.zrem(keys.dueOf(taskId), taskId, watchdogMember(taskId), followUpMember(taskId));
    return children;
  }
}
