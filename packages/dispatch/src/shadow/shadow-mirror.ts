import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  DEFAULT_TENANT,
  shadowPicked,
  type ReachKeys,
  type SnapshotAgent,
} from '@agent-reach/protocol';
import type { Delivery } from '../delivery.ts';
import { servesTenant } from '../routing/policy.ts';
import type { SnapshotHolder } from '../snapshot/snapshot-holder.ts';
import { attemptMessage, type TaskSpec } from '../task/task-spec.ts';
import type { ShadowSettingsStore } from './shadow-settings.ts';

/** What {@link ShadowMirror} needs. */
export interface ShadowMirrorOptions {
  redis: RedisClient;
  keys: ReachKeys;
  delivery: Delivery;
  snapshot: SnapshotHolder;
  settings: ShadowSettingsStore;
  logger: Logger;
}

const LIVE = new Set(['HEALTHY', 'SUSPECT', 'DEGRADED']);

/**
 * The agents a task's shadow copies go to: its capability's live agents in observation mode, of
 * its tenant or shared — a copy crosses no tenant line.
 */
export function observersFor(
  agents: readonly SnapshotAgent[],
  task: Pick<TaskSpec, 'tenant'>,
): SnapshotAgent[] {
  const tenant = task.tenant || DEFAULT_TENANT;
  return agents.filter((a) => a.observe === true && LIVE.has(a.status) && servesTenant(a, tenant));
}

/**
 * Mirrors a share of real tasks to their capability's agents in observation mode (docs/PROTOCOL.md
 * §7): after a task's first attempt is sent, a task picked at the capability's rate (by its id, so
 * every process decides alike) is delivered as a shadow copy to each live observing agent of its
 * capability and tenant. A copy takes only an observing agent's free slot — observing agents take
 * no caller's task, so no real task ever waits for one — and one that finds no free slot is
 * dropped, never queued or retried. It runs beside the send, never delaying or failing it.
 */
export class ShadowMirror {
  readonly #log: Logger;

  constructor(private readonly o: ShadowMirrorOptions) {
    this.#log = o.logger.child({ module: 'shadow' });
  }

  /** Called once a task's first attempt is sent; resolves when its copies are delivered or dropped. */
  mirror(task: TaskSpec, deadlineMs: number): Promise<void> | undefined {
    const { settings, snapshot } = this.o;
    if (!settings.anyOn) return undefined;
    const { rate } = settings.for(task.capability);
    if (!shadowPicked(task.taskId, rate)) return undefined;
    const observers = observersFor(snapshot.agentsFor(task.capability), task);
    if (observers.length === 0) return undefined;
    return this.#send(task, deadlineMs, observers).catch((err: unknown) =>
      this.#log.warn({ err, task_id: task.taskId }, 'shadow copy not sent'),
    );
  }

  async #send(task: TaskSpec, deadlineMs: number, observers: SnapshotAgent[]): Promise<void> {
    const message = { ...attemptMessage(task, 1, deadlineMs), callback_topic: '' };
    let sent = 0;
    let dropped = 0;
    for (const agent of observers) {
      const result = await this.o.delivery.deliver(agent, message, { shadow: true });
      if (result.ok) sent++;
      else {
        dropped++;
        this.#log.debug(
          { task_id: task.taskId, agent_id: agent.agent_id, refusal: result.refusal },
          'shadow copy dropped',
        );
      }
    }
    const stats = this.o.keys.stats();
    const writes: Promise<unknown>[] = [];
    if (sent > 0) writes.push(this.o.redis.hincrby(stats, 'shadow_sent', sent));
    if (dropped > 0) writes.push(this.o.redis.hincrby(stats, 'shadow_dropped', dropped));
    await Promise.all(writes);
  }
}
