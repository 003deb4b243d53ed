import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import {
  CallbackPublisher,
  createSendPath,
  defineDispatchCommands,
  LeaseLock,
  lockScript,
  PoolGauge,
  RoomDrainer,
  ROOM_SCRIPTS,
  ScheduleStore,
  SnapshotHolder,
  TaskCanceller,
  WaitingRoom,
} from '@agent-reach/dispatch';
import {
  createEventSink,
  taskArchiveEnabled,
  type EventSink,
  type EventSinkOptions,
} from '@agent-reach/events';
import {
  ApiKeyStore,
  connectRedis,
  createRedis,
  decideAuth,
  edgeGuardsFrom,
  loadScripts,
  outboundLoopbackAllowed,
  serviceLogger,
  watchClientStuckCommands,
  type RedisConnectionSettings,
} from '@agent-reach/service-kit';
import { buildRegistryApp } from './app.ts';
import { ackAgentScript } from './commands/ack-agent.ts';
import { ackTaskScript } from './commands/ack-task.ts';
import { checkTaskShards } from './tasks/task-shard-check.ts';
import { delConsumerScript } from './commands/delconsumer.ts';
import { deregisterScript } from './commands/deregister.ts';
import { ejectScript } from './commands/eject.ts';
import { heartbeatScript } from './commands/heartbeat.ts';
import { leaseScript } from './commands/lease.ts';
import { outputScript } from './commands/output.ts';
import { registerScript } from './commands/register.ts';
import { releaseScript } from './commands/release.ts';
import { renewScript } from './commands/renew.ts';
import { requeueScript } from './commands/requeue.ts';
import { serveScript } from './commands/serve.ts';
import { slowScript } from './commands/slow.ts';
import { snapshotScript } from './commands/snapshot.ts';
import { deltaScript } from './commands/delta.ts';
import { suspectScript } from './commands/suspect.ts';
import { AckApplier } from './acks/ack-applier.ts';
import { AckConsumer } from './acks/ack-consumer.ts';
import { AckSignatures } from './acks/ack-signatures.ts';
import { OutputStep } from './acks/output-step.ts';
import { AgentAcl } from './acl/agent-acl.ts';
import { RelayAcl } from './acl/relay-acl.ts';
import { Housekeeper } from './duties/housekeeper.ts';
import { housekeepingLeaseMs } from './duties/housekeeping-lease.ts';
import { passMarkScript } from './commands/pass-mark.ts';
import { LeaseSweeper } from './sweeps/lease-sweeper.ts';
import { SnapshotWriter } from './duties/snapshot-writer.ts';
import { compileRegistryOptions, type RegistryOptions } from './options.ts';
import { AgentRegistry } from './registry/agent-registry.ts';
import { createRegistryObservability } from './plugins/observability.ts';
import { registerRoomMetrics } from './metrics/room-metrics.ts';
import { ConsumerJanitor } from './sweeps/consumer-janitor.ts';
import { IndexTrimmer } from './sweeps/index-trimmer.ts';
import { DueProcessor } from './sweeps/due-processor.ts';
import { ScheduleFirer } from './duties/schedule-firer.ts';
import { PoolDrainer } from './sweeps/pool-drainer.ts';
import { Ejector } from './sweeps/ejector.ts';
import { InflightSweeper } from './sweeps/inflight-sweeper.ts';
import { Prober } from './sweeps/prober.ts';
import { ShadowResults } from './observation/shadow-results.ts';
import { ObservationReporter } from './observation/observation-report.ts';
import { degradeScript } from './health/commands/degrade.ts';
import { outcomesScript } from './health/commands/outcomes.ts';
import { dependencyDownScript } from './health/commands/dependency-down.ts';
import { DependencyWatch } from './health/dependency-watch.ts';
import { recoverScript } from './health/commands/recover.ts';
import { HealthRecorder } from './health/health-recorder.ts';
import { HealthSweep } from './health/health-sweep.ts';
import { TaskOutcomes } from './tasks/outcomes.ts';
import { Resender } from './tasks/resender.ts';

/** A task taken from a waiting room this long ago whose send never ended goes back to its place. */
const ROOM_RECLAIM_AFTER_MS = 30_000;
import { endpointSetScript } from './endpoints/commands/endpoint-set.ts';
import { EndpointDeclarations } from './endpoints/endpoint-declarations.ts';
import { EndpointRegistration } from './endpoints/endpoint-registration.ts';
import { EndpointStore } from './endpoints/endpoint-store.ts';
import { EndpointsFileApplier } from './endpoints/endpoints-file-applier.ts';
import { EndpointsFileWatcher } from './endpoints/endpoints-file-watcher.ts';
import { HeartbeatBatch } from './registry/heartbeat-batch.ts';
import { createTaskArchive } from './archive/create-archive.ts';
import { archiveDoneScript } from './commands/archive-done.ts';

/** A running registry-sync: the HTTP app plus its background duties. */
export interface RegistryService {
  app: Awaited<ReturnType<typeof buildRegistryApp>>;
  options: RegistryOptions;
  redis: RedisClient;
  events: EventSink;
  housekeeper: Housekeeper;
  /** Starts listening on options.port/host; returns the address. */
  listen(): Promise<string>;
  /** Stops accepting, finishes in-flight requests and loops, flushes events. Idempotent. */
  close(): Promise<void>;
}

/**
 * Redis settings: fail fast while Redis is away, reconnect by itself when it returns. Commands
 * on a connection without blocking reads fail when Redis gives no answer for 5 s (a frozen
 * server), found by a periodic check rather than a timer per command (ioredis commandTimeout).
 * `pipelined`: the commands of one event-loop turn share a write (ioredis auto-pipelining).
 */
function connect(
  connection: RedisConnectionSettings,
  blocking: boolean,
  pipelined = !blocking,
): RedisClient {
  const redis = createRedis(connection, {
    lazyConnect: true,
    enableAutoPipelining: pipelined,
    maxRetriesPerRequest: blocking ? null : 2,
    retryStrategy: (times) => Math.min(50 * times, 1000),
  });
  if (!blocking) watchClientStuckCommands(redis, 5000);
  return redis;
}

/** Wires registry-sync from settings. */
export async function createRegistryService(
  opts: Partial<RegistryOptions> = {},
  extra: { logger?: Logger; events?: EventSinkOptions; housekeeping?: boolean } = {},
): Promise<RegistryService> {
  const options = compileRegistryOptions(opts);
  const logger = extra.logger ?? serviceLogger('registry-sync', options.logLevel);
  // Before any connection: a listener off loopback without an admin key does not start.
  const auth = decideAuth({
    service: 'registry-sync',
    setting: options.auth,
    hosts: [options.host],
    adminKey: options.adminKey,
  });
  if (auth.warning) logger.warn({ module: 'auth' }, auth.warning);
  // Whether a card_url or an endpoint's URL a caller names may be a loopback host.
  const outboundLoopback = outboundLoopbackAllowed(options.outboundLoopback, auth.required);
  const keys = reachKeys(options.prefix, {
    shards: () => options.shards,
    taskShards: () => options.taskShards,
  });
  const connection = { ...options.redisConnection, url: options.redisUrl };
  const redis = connect(connection, false);
  // One blocking connection per shard of the acks stream: a consumer reads each.
  const blockings = Array.from({ length: options.shards }, () => connect(connection, true));
  const subscriber = connect(connection, true);
  // The acks' hot path on a connection of its own, with only the scripts it runs (see loadScripts).
  // Not auto-pipelined: its steps already leave as one script call per batch, and sent directly
  // each is built without ioredis' per-argument copy (FlatCommand): 12–32 % less CPU per task
  // (bench/results/2026-12-07-flat-args.md). The main connection keeps it: many agents'
  // heartbeats in one turn share a write.
  const acks = connect(connection, false, false);
  // Each connection gets only the scripts it runs (see loadScripts); a script a connection
  // comes to run is added to its list. The main one: the agents' API, sweeps and duties, the
  // health module's scripts, and retries with their deliveries and dead letters.
  loadScripts(redis, [
    registerScript,
    heartbeatScript,
    deregisterScript,
    serveScript,
    leaseScript,
    snapshotScript,
    deltaScript,
    lockScript,
    passMarkScript,
    releaseScript,
    suspectScript,
    ejectScript,
    delConsumerScript,
    requeueScript,
    outcomesScript,
    dependencyDownScript,
    degradeScript,
    recoverScript,
    endpointSetScript,
    archiveDoneScript,
  ]);
  defineDispatchCommands(redis, [
    'retry',
    'assign',
    'unassign',
    'deliver',
    'record-pooled',
    'reject',
    'publish-callback',
    'hold',
    'schedule-advance',
    'cancel',
  ]);
  loadScripts(redis, ROOM_SCRIPTS);
  loadScripts(acks, [
    ackAgentScript,
    ackTaskScript,
    releaseScript,
    slowScript,
    requeueScript,
    renewScript,
    outputScript,
  ]);
  defineDispatchCommands(acks, ['publish-callback']);
  for (const conn of [redis, ...blockings, subscriber, acks]) {
    conn.on('error', (err: Error) =>
      logger.warn({ err, module: 'redis' }, 'redis connection error'),
    );
    // A Redis briefly away at start-up is waited for, 10 s at most; then the error names it.
    await connectRedis(conn, connection);
  }

  const apiKeys = new ApiKeyStore({ redis, keys, adminKey: options.adminKey });
  await apiKeys.listen(subscriber);
  const observability = createRegistryObservability({ redis, keys, logger });
  const events = observability.observe(createEventSink({ ...(extra.events ?? {}), logger }));
  // REACH_TASK_ARCHIVE: the scripts that make a task final append it to the archive outbox.
  const archiving = {
    ...options,
    archive: taskArchiveEnabled(options.taskArchive, extra.events?.url),
  };
  // REACH_AGENT_ACL=on: a Redis user per agent instance, and signed acks (docs/SECURITY.md).
  const agentAcl = options.agentAcl ? new AgentAcl({ redis, keys, logger }) : undefined;
  await agentAcl?.check();
  const registry = new AgentRegistry({ redis, keys, settings: options, acl: agentAcl });
  // With it, relays get Redis users that reach the declared endpoint agents only.
  const relayAcl = options.agentAcl ? new RelayAcl({ redis, keys, logger }) : undefined;
  // Routers read the lease and retry settings from here (and again with every snapshot).
  const snapshots = new SnapshotWriter({ redis, keys, registry, settings: options, logger });
  // Before the count is published: tasks in flight under another count stop the start-up.
  await checkTaskShards({ redis, keys, logger });
  await snapshots.publishSettings();
  const snapshot = new SnapshotHolder({
    redis,
    subscriber,
    keys,
    intervalMs: options.snapshotIntervalMs,
    logger,
  });
  await snapshot.start();
  const { delivery, sender, deadLetters, fleet, shadows } = createSendPath({
    redis,
    keys,
    snapshot,
    events,
    logger,
    settings: archiving,
  });
  await shadows.start();
  // created_at on this process's clock while Redis's agrees with it (dispatch/redis-clock.ts).
  delivery.followRedisTime();
  // Agents' outcomes, for their health scores and DEGRADED (health/).
  const health = new HealthRecorder({
    redis,
    keys,
    fleet,
    settings: options,
    logger,
    onStatusChange: (agentIds) => void snapshots.changed(agentIds),
  });
  const outcomes = new TaskOutcomes({
    redis,
    keys,
    events,
    fleet,
    deadLetters,
    health,
    settings: archiving,
    logger,
  });
  // The waiting rooms (docs/ROUTING.md): sent from here too as slots free; a task taken by a
  // process that stopped mid-send is given back; one still waiting at its deadline dies here.
  const room = new WaitingRoom(redis, keys);
  registerRoomMetrics(observability.metrics.registry, room);
  const roomDrainer = new RoomDrainer({
    redis,
    keys,
    snapshot,
    watermark: () => options.watermark,
    sender,
    delivery,
    room,
    pools: new PoolGauge(redis, keys),
    logger,
    dispatchGraceMs: options.dispatchGraceMs,
    reclaimAfterMs: ROOM_RECLAIM_AFTER_MS,
  });
  const resender = new Resender({
    redis,
    keys,
    snapshot,
    watermark: () => options.watermark,
    sender,
    delivery,
    outcomes,
    room,
    settings: options,
    logger,
  });
  const housekeeper = new Housekeeper({
    duties: {
      lock: new LeaseLock({
        redis,
        key: keys.lock('housekeeping'),
        owner: options.instanceId,
        leaseMs: housekeepingLeaseMs(options.sweepIntervalMs),
      }),
      passMark: () => passMarkScript.run(redis, { keys: { mark: keys.lastPass() }, args: {} }),
      leases: new LeaseSweeper({ redis, keys, settings: options }),
      inflight: new InflightSweeper({
        redis,
        keys,
        outcomes,
        resender,
        fleet,
        settings: options,
        logger,
      }),
      ejector: new Ejector({ redis, keys, fleet, settings: options, logger }),
      health: new HealthSweep({ redis, keys, fleet, events, settings: options, logger }),
      due: new DueProcessor({
        redis,
        keys,
        resender,
        canceller: new TaskCanceller({
          redis,
          keys,
          callbacks: new CallbackPublisher({ redis, keys, settings: options }),
          events,
          logger,
          retentionS: () => options.dlqRetentionS,
        }),
        outcomes,
        dlqRetentionS: options.dlqRetentionS,
        logger: logger.child({ module: 'due' }),
      }),
      schedules: new ScheduleFirer({
        redis,
        keys,
        store: new ScheduleStore({ redis, keys }),
        events,
        logger,
        served: (capabilities) =>
          capabilities.some((c) => snapshot.agentsFor(c).some((a) => a.status !== 'OFFLINE')),
      }),
      prober: new Prober({ delivery, intervalMs: options.probeIntervalMs, logger }),
      dependencies: new DependencyWatch({
        redis,
        keys,
        fleet,
        logger,
        probeIntervalMs: options.probeIntervalMs,
      }),
      janitor: new ConsumerJanitor({ redis, keys, logger }),
      index: new IndexTrimmer({ redis, keys, keepS: () => options.searchIndexKeepS }),
      pools: new PoolDrainer({
        redis,
        keys,
        snapshot,
        outcomes,
        resender,
        receiptTimeoutMs: options.receiptTimeoutMs,
        logger,
      }),
      snapshots,
      registry,
    },
    settings: options,
    logger: logger.child({ module: 'housekeeper' }),
    onTransition: (t) =>
      fleet.append({
        kind: 'status',
        agent_id: t.agent_id,
        from: t.from,
        to: t.to,
        reason: t.damped ? 'lease (flapping: held SUSPECT)' : 'lease',
      }),
  });
  const ackCallbacks = new CallbackPublisher({ redis: acks, keys, settings: options });
  const shadowResults = new ShadowResults({ redis: acks, keys, settings: options });
  const applier = new AckApplier({
    redis: acks,
    keys,
    events,
    callbacks: ackCallbacks,
    outcomes,
    settings: archiving,
    logger,
    signatures: agentAcl ? new AckSignatures({ redis: acks, keys }) : undefined,
    health,
    onSlotFreed: (agentId) => roomDrainer.freed(agentId),
    shadows: shadowResults,
    output: new OutputStep({
      redis: acks,
      keys,
      events,
      callbacks: ackCallbacks,
      settings: options,
      logger,
    }),
  });
  const consumers = blockings.map(
    (blocking, shard) =>
      new AckConsumer({
        blocking,
        redis: acks,
        keys,
        applier,
        settings: {
          consumer: options.instanceId,
          stream: keys.acks(shard),
          // A killed instance's acks are applied within about as long as its duties take to move.
          claimIdleMs: 2 * housekeepingLeaseMs(options.sweepIntervalMs),
          claimEveryMs: Math.max(250, housekeepingLeaseMs(options.sweepIntervalMs) / 3),
          // One XACK and XDEL per 100 ms of applied acks, not one per batch at low rates.
          ackAfterMs: 100,
          lingerMs: options.ackLingerMs,
        },
        logger,
      }),
  );
  // Final tasks to InfluxDB, by the instance holding the archive lock (docs/OBSERVABILITY.md).
  const { duty: archiveDuty } = createTaskArchive({
    redis,
    keys,
    events: extra.events,
    settings: options,
    registry: observability.metrics.registry,
    logger,
  });
  const onRegistryChange = (agentIds: readonly string[]) => housekeeper.publishChanges(agentIds);
  const endpointStore = new EndpointStore({ redis, keys });
  // REACH_ENDPOINTS_FILE: endpoint agents declared by the operator's file, kept as it says.
  const endpointsFile = options.endpointsFile
    ? new EndpointsFileWatcher({
        path: options.endpointsFile,
        // The operator's own file, not a caller's request: loopback unless turned off.
        allowed: { hosts: options.endpointHosts, loopback: options.outboundLoopback !== 'off' },
        applier: new EndpointsFileApplier({ store: endpointStore, agents: registry, logger }),
        logger,
      })
    : undefined;
  // Hosts and origins answered, proxies trusted, failed authentications limited (SECURITY.md, Edges).
  const guards = edgeGuardsFrom(options, redis, keys);
  const app = await buildRegistryApp({
    redis,
    registry,
    bodyLimitBytes: options.bodyLimitBytes,
    auth: { required: auth.required, verifier: apiKeys, failures: guards.failures },
    edge: guards.edge,
    onRegistryChange,
    fleet,
    cards: {
      hosts: options.cardHosts,
      loopback: outboundLoopback,
      timeoutMs: options.cardTimeoutMs,
      maxBytes: options.cardMaxBytes,
    },
    heartbeats: new HeartbeatBatch({ redis, keys, settings: options }),
    observations: new ObservationReporter({ redis, keys, shadows: shadowResults }),
    ...(relayAcl ? { relayAcl } : {}),
    endpoints: {
      declarations: new EndpointDeclarations({
        store: endpointStore,
        agents: registry,
        allowed: { hosts: options.endpointHosts, loopback: outboundLoopback },
        logger,
      }),
      registration: new EndpointRegistration({
        store: endpointStore,
        registry,
        fleet,
        onRegistryChange,
        logger,
      }),
    },
    logger,
    metrics: observability.metrics,
  });
  await endpointsFile?.start();
  await Promise.all(consumers.map((c) => c.start()));
  health.start();
  roomDrainer.start();
  if (extra.housekeeping !== false) housekeeper.start();
  if (extra.housekeeping !== false) archiveDuty.start();
  agentAcl?.start(Math.max(options.sweepIntervalMs, 1000));
  // Declarations change rarely: a second's delay before a relay may read a new agent's inbox.
  relayAcl?.start(1000);

  let closing: Promise<void> | undefined;
  return {
    app,
    options,
    redis,
    events,
    housekeeper,
    listen: () => app.listen({ port: options.port, host: options.host }),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await endpointsFile?.close();
        resender.close();
        roomDrainer.close();
        await Promise.all(consumers.map((c) => c.close()));
        await health.close();
        await housekeeper.close();
        await archiveDuty.close();
        await agentAcl?.close();
        await relayAcl?.close();
        shadows.stop();
        delivery.close();
        await snapshot.close();
        await events.close();
        await acks.quit().catch(() => undefined);
        await redis.quit().catch(() => undefined);
      })()),
  };
}
