import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import {
  DueWatch,
  HoldBatch,
  type HoldPath,
  firedTaskId,
  holdTask,
  latestTick,
  nextTick,
  type ScheduleStore,
} from '@agent-reach/dispatch';
import { nextNonce } from '@agent-reach/service-kit';

/** Schedules looked at in one pass; the rest wait for the next pass. */
const BATCH = 200;

/** What the firer works with. */
export interface ScheduleFirerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  store: ScheduleStore;
  events: EventSink;
  logger: Logger;
  /**
   * Whether any agent that is not OFFLINE declares the capability (or one of its fallbacks), from
   * the registry snapshot; a tick that finds none is skipped. Without it, every tick fires.
   */
  served?: (capabilities: readonly string[]) => boolean;
}

/**
 * Fires the schedules whose tick has come (`POST /v1/schedules`), on the housekeeping leader
 * only. Each tick is a task with task_id `<schedule_id>:<tick ms>`, held as `delayed` until the
 * tick (send/hold.ts, already due) and sent by the due processor through the one task sender. A
 * tick fired again — a leader that stopped between firing and advancing, and the next leader —
 * finds its task_id taken and adds nothing. Ticks missed while no leader ran are not made up
 * for: the latest one fires once, the older ones are skipped. A tick when no agent of the task's
 * capability (nor of its fallbacks) is registered and not OFFLINE is skipped too: a schedule of a
 * capability nobody serves fires nothing rather than a task a second that waits and dies.
 */
export class ScheduleFirer {
  private readonly log: Logger;
  private readonly path: HoldPath;

  constructor(private readonly o: ScheduleFirerOptions) {
    this.log = o.logger.child({ module: 'schedules' });
    const holds = new HoldBatch({ redis: o.redis, keys: o.keys });
    // A tick's holds leave in the write of their due entries.
    const watch = new DueWatch({ redis: o.redis, keys: o.keys, issued: () => holds.flush() });
    this.path = { watch, holds };
  }

  /** One pass: fires every due schedule's tick; returns how many tasks were fired. */
  async fire(now: number): Promise<number> {
    let fired = 0;
    for (const [id, due] of await this.o.store.due(now, BATCH)) {
      try {
        if (await this.fireOne(id, due, now)) fired++;
      } catch (err: unknown) {
        this.log.warn(
          { err, schedule_id: id },
          'schedule tick not fired; the next pass tries again',
        );
      }
    }
    return fired;
  }

  private async fireOne(id: string, due: number, now: number): Promise<boolean> {
    const { store } = this.o;
    const schedule = await store.get(id);
    if (!schedule || schedule.paused) {
      // Deleted or paused meanwhile: its scripts keep the index right; nothing to fire.
      return false;
    }
    const tick = latestTick(schedule.cadence, due, now);
    const taskId = firedTaskId(id, tick);
    const { spec } = schedule;
    if (this.o.served && !this.o.served([spec.capability, ...(spec.fallbackCapabilities ?? [])])) {
      await store.advance(id, due, nextTick(schedule.cadence, Math.max(tick, now)), 0, '');
      this.log.debug({ schedule_id: id, tick }, 'no agent of its capability: tick skipped');
      return false;
    }
    const outcome = await holdTask(this.path, this.o.events, {
      task: { ...schedule.spec, taskId },
      nonce: nextNonce(),
      runAt: tick,
      timeoutMs: schedule.timeoutMs,
      now,
    });
    const next = nextTick(schedule.cadence, Math.max(tick, now));
    await store.advance(id, due, next, tick, taskId);
    if (tick > due) {
      this.log.info(
        { schedule_id: id, skipped_from: due, fired: tick },
        'ticks missed while no leader ran: the latest fired, older ones skipped',
      );
    }
    this.log.debug({ schedule_id: id, task_id: taskId, outcome }, 'schedule fired');
    return outcome === 'held';
  }
}
