import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { compileEventSinkOptions, type EventSinkOptions } from '@agent-reach/events';
import type { ReachKeys } from '@agent-reach/protocol';
import { LeaseLock } from '@agent-reach/dispatch';
import { housekeepingLeaseMs } from '../duties/housekeeping-lease.ts';
import { ArchiveDuty, type ArchiveDutySettings } from './archive-duty.ts';
import {
  registerArchiveMetrics,
  TaskArchiver,
  type ArchiveTarget,
  type TaskArchiverSettings,
} from './task-archiver.ts';

/** Timeout of one archive write: a slow InfluxDB holds the outbox back, never dispatch. */
const WRITE_TIMEOUT_MS = 5000;

/** What {@link createTaskArchive} needs. */
export interface TaskArchiveOptions {
  /** A connection where archive-done-n.lua is loaded. */
  redis: RedisClient;
  keys: ReachKeys;
  /** The event sink's settings: archived tasks go to the same InfluxDB and database. */
  events: EventSinkOptions | undefined;
  settings: TaskArchiverSettings &
    ArchiveDutySettings & { instanceId: string; sweepIntervalMs: number };
  /** The service's metrics registry. */
  registry: Registry;
  logger: Logger;
}

/**
 * The archive's duty: every registry-sync instance runs it and the one holding the `archive`
 * lock moves the outboxes to InfluxDB. Without an InfluxDB it still finishes what some process
 * appended (sets the tasks' expiry), so no outbox or record outlives its retention.
 */
export function createTaskArchive(o: TaskArchiveOptions): {
  duty: ArchiveDuty;
  archiver: TaskArchiver;
} {
  const resolved = o.events?.url
    ? compileEventSinkOptions({ ...o.events, logger: undefined })
    : undefined;
  const target: ArchiveTarget | undefined =
    resolved?.url !== undefined
      ? {
          url: resolved.url,
          db: resolved.bucket,
          token: resolved.token,
          timeoutMs: WRITE_TIMEOUT_MS,
        }
      : undefined;
  const archiver = new TaskArchiver({
    redis: o.redis,
    keys: o.keys,
    target,
    settings: o.settings,
    logger: o.logger,
  });
  registerArchiveMetrics(o.registry, archiver);
  const duty = new ArchiveDuty({
    archiver,
    lock: new LeaseLock({
      redis: o.redis,
      key: o.keys.lock('archive'),
      owner: o.settings.instanceId,
      leaseMs: housekeepingLeaseMs(o.settings.sweepIntervalMs),
    }),
    settings: o.settings,
    logger: o.logger,
  });
  return { duty, archiver };
}
