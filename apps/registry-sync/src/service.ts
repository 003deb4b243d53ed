import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import { createEventSink, type EventSink, type EventSinkOptions } from '@agent-reach/events';
import { buildRegistryApp } from './app.ts';
import { defineCommands } from './commands/index.ts';
import { AckApplier } from './acks/ack-applier.ts';
import { AckConsumer } from './acks/ack-consumer.ts';
import { Housekeeper } from './duties/housekeeper.ts';
import { LeaseLock } from './duties/lease-lock.ts';
import { LeaseSweeper } from './duties/lease-sweeper.ts';
import { SnapshotWriter } from './duties/snapshot-writer.ts';
import { FleetEventLog } from './fleet/fleet-event-log.ts';
import { compileRegistryOptions, type RegistryOptions } from './options.ts';
import { AgentRegistry } from './registry/agent-registry.ts';

/** A running registry-sync: the HTTP app plus its background duties. */
export interface RegistryService {
  app: Awaited<ReturnType<typeof buildRegistryApp>>;
  options: RegistryOptions;
  redis: Redis;
  events: EventSink;
  /** Starts listening on options.port/host; returns the address. */
  listen(): Promise<string>;
  /** Stops accepting, finishes in-flight requests and loops, flushes events. Idempotent. */
  close(): Promise<void>;
}

/** Wires registry-sync from settings. */
export async function createRegistryService(
  opts: Partial<RegistryOptions> = {},
  extra: { logger?: Logger; events?: EventSinkOptions } = {},
): Promise<RegistryService> {
  const options = compileRegistryOptions(opts);
  const logger = extra.logger ?? pino({ level: options.logLevel, base: { service: 'registry-sync' } });
  const keys = reachKeys(options.prefix);
  const redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const blocking = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: null });
  defineCommands(redis);
  await redis.connect();
  await blocking.connect();
  redis.on('error', (err: Error) => logger.warn({ err, module: 'redis' }, 'redis connection error'));
  blocking.on('error', (err: Error) => logger.warn({ err, module: 'redis' }, 'redis connection error'));

  const events = createEventSink({ ...(extra.events ?? {}), logger });
  const registry = new AgentRegistry(redis, keys, options);
  const fleet = new FleetEventLog(redis, keys, logger.child({ module: 'fleet' }));
  const snapshots = new SnapshotWriter(redis, keys, registry);
  const housekeeper = new Housekeeper(
    new LeaseLock(redis, keys.lock('housekeeping'), options.instanceId, Math.max(3 * options.sweepIntervalMs, 3000)),
    new LeaseSweeper(redis, keys, options),
    snapshots,
    options,
    logger.child({ module: 'housekeeper' }),
    (t) => fleet.append({ kind: 'status', agent_id: t.agent_id, from: t.from, to: t.to, reason: 'lease' }),
  );
  const applier = new AckApplier(redis, keys, events, options, logger);
  const consumer = new AckConsumer(blocking, redis, keys, applier, { consumer: options.instanceId }, logger);
  const app = await buildRegistryApp({
    redis,
    registry,
    bodyLimitBytes: options.bodyLimitBytes,
    onRegistryChange: () => housekeeper.writeSnapshotNow(),
    fleet,
    logger,
  });
  await consumer.start();
  housekeeper.start();

  let closing: Promise<void> | undefined;
  return {
    app,
    options,
    redis,
    events,
    listen: () => app.listen({ port: options.port, host: options.host }),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await consumer.close();
        await housekeeper.close();
        await events.close();
        await redis.quit().catch(() => undefined);
      })()),
  };
}
