import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import { CallbackPublisher, type CallbackSettings } from '../callbacks.ts';
import { Delivery } from '../delivery.ts';
import { FleetEventLog } from '../fleet-event-log.ts';
import type { SnapshotHolder } from '../snapshot/snapshot-holder.ts';
import { DeadLetterer } from '../task/dead-letterer.ts';
import { TaskSender } from './task-sender.ts';
import { ShadowMirror } from '../shadow/shadow-mirror.ts';
import { ShadowSettingsStore } from '../shadow/shadow-settings.ts';

/** Settings of the send path; each is read when it is used, so a getter can follow a change. */
export interface SendPathSettings extends CallbackSettings {
  /**
   * Lease age past which an agent is not delivered to, whatever its status (the OFFLINE bound
   * when that is longer).
   */
  deliveryLeaseMs: number;
  /** Lease age past which an agent is OFFLINE. */
  offlineMs: number;
  /** How long a dead task is kept, seconds. */
  dlqRetentionS: number;
  /** How long a session sticks to the agent its task was sent to, seconds. */
  sessionTtlS: number;
  /** Share of a capability's tasks mirrored to observing agents without settings of its own. */
  shadowRate: number;
  /** A task dead on arrival goes to the archive outbox (REACH_TASK_ARCHIVE). @default false */
  archive?: boolean;
}

/** What the send path is built from. */
export interface SendPathOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  events: EventSink;
  logger: Logger;
  settings: SendPathSettings;
}

/** The send path's parts, as both services use them. */
export interface SendPath {
  delivery: Delivery;
  sender: TaskSender;
  /** The capabilities' shadow settings: start() it to follow the operator API's changes. */
  shadows: ShadowSettingsStore;
  deadLetters: DeadLetterer;
  callbacks: CallbackPublisher;
  fleet: FleetEventLog;
}

/** Builds the one send path and the one dead-letter announcement on a connection. */
export function createSendPath(o: SendPathOptions): SendPath {
  const { redis, keys, snapshot, events, logger, settings } = o;
  const delivery = new Delivery({
    redis,
    keys,
    leaseBoundMs: () => Math.max(settings.deliveryLeaseMs, settings.offlineMs),
  });
  const callbacks = new CallbackPublisher({ redis, keys, settings });
  const fleet = new FleetEventLog({ redis, keys, logger: logger.child({ module: 'fleet' }) });
  const shadows = new ShadowSettingsStore({
    redis,
    keys,
    defaultRate: settings.shadowRate,
    logger,
  });
  return {
    delivery,
    callbacks,
    fleet,
    shadows,
    sender: new TaskSender({
      redis,
      keys,
      delivery,
      snapshot,
      events,
      logger,
      sessionTtlS: settings.sessionTtlS,
      shadow: new ShadowMirror({ redis, keys, delivery, snapshot, settings: shadows, logger }),
    }),
    deadLetters: new DeadLetterer({
      redis,
      keys,
      events,
      callbacks,
      fleet,
      logger,
      dlqRetentionS: () => settings.dlqRetentionS,
      archive: () => settings.archive ?? false,
    }),
  };
}
