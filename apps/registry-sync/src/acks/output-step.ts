import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { AckMessage, CallbackMessage, OutputStage, ReachKeys } from '@agent-reach/protocol';
import type { CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import { outputScript, type OutputRefusal } from '../commands/output.ts';

/** Settings of the output step. */
export interface OutputSettings {
  /** Most progress values and chunks kept per task (REACH_STREAM_MAX_CHUNKS). */
  streamMaxChunks: number;
  /** Most bytes of them kept per task (REACH_STREAM_MAX_BYTES). */
  streamMaxBytes: number;
  /** How long the events stream outlives the task's deadline (REACH_TASK_RETENTION_S). */
  taskRetentionS: number;
}

/** What the output step works with. */
export interface OutputStepOptions {
  /** A connection where output-3.lua is loaded (`outputScript`). */
  redis: RedisClient;
  keys: ReachKeys;
  events: EventSink;
  /** Writes the non-final items of a task submitted with `stream: true` on its callback topic. */
  callbacks: CallbackPublisher;
  settings: OutputSettings;
  logger: Logger;
}

/** What applying an output ack did. */
export type OutputOutcome = { applied: true } | { applied: false; reason: OutputRefusal };

/**
 * Applies `progress` and `chunk` acks (a running task's output): output-3.lua keeps them in the
 * task's events stream within the task's bounds; the first output and a truncation are recorded
 * in the timeline and as InfluxDB points; a task submitted with `stream: true` also gets them
 * on its callback topic as non-final items (status `progress`, `chunk` or `truncated`).
 */
export class OutputStep {
  private readonly log: Logger;

  constructor(private readonly o: OutputStepOptions) {
    this.log = o.logger.child({ module: 'task-output' });
  }

  /** Applies one output ack whose entry id is `entryId`, written at Redis time `at`. */
  async apply(
    ack: AckMessage & { stage: OutputStage },
    entryId: string,
    at: number,
  ): Promise<OutputOutcome> {
    const { redis, keys, settings } = this.o;
    const items = ack.stage === 'progress' ? [ack.progress ?? 'null'] : (ack.chunks ?? []);
    const reply = await outputScript.run(redis, {
      keys: {
        task: keys.task(ack.task_id),
        timeline: keys.timeline(ack.task_id),
        events: keys.taskEvents(ack.task_id),
      },
      args: {
        stage: ack.stage,
        attempt: ack.attempt,
        agentId: ack.agent_id,
        epoch: ack.epoch,
        at,
        maxEntries: settings.streamMaxChunks,
        maxBytes: settings.streamMaxBytes,
        retentionS: settings.taskRetentionS,
        ackEntryId: entryId,
      },
      items: items.map((data) => ({ data })),
    });
    if (!reply.ok) {
      this.log.debug(
        { task_id: ack.task_id, agent_id: ack.agent_id, reason: reply.refusal },
        'output ack refused',
      );
      return { applied: false, reason: reply.refusal };
    }
    const { kept, truncated, first, topic, capability, attempt, receivedAt } = reply;
    const point = { capability, agent_id: ack.agent_id, task_id: ack.task_id, attempt, at };
    if (first)
      this.o.events.write({
        ...point,
        stage: 'streaming',
        ...(receivedAt > 0 ? { latency_ms: Math.max(0, at - receivedAt) } : {}),
      });
    if (truncated) {
      this.log.info(
        { task_id: ack.task_id },
        'task output reached its bound; later output dropped',
      );
      this.o.events.write({ ...point, stage: 'truncated', reason: 'stream bound reached' });
    }
    if (topic && (kept > 0 || truncated)) {
      const base = { task_id: ack.task_id, capability, agent_id: ack.agent_id, attempt };
      const msgs: CallbackMessage[] = items
        .slice(0, kept)
        .map((data) =>
          ack.stage === 'progress'
            ? { ...base, status: 'progress', completed_at: at, progress: data }
            : { ...base, status: 'chunk', completed_at: at, chunk: data },
        );
      if (truncated) msgs.push({ ...base, status: 'truncated', completed_at: at });
      await this.o.callbacks.append(topic, msgs);
    }
    return { applied: true };
  }
}
