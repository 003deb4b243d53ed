import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import {
  createEventSink,
  taskArchiveEnabled,
  type EventSink,
  type EventSinkOptions,
} from '@agent-reach/events';
import { influxSourceFrom } from '@agent-reach/analytics';
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
} from '@agent-reach/service-kit';
import { buildRouterApp } from './app.ts';
import { BlockingPool } from './callbacks/blocking-pool.ts';
import { ResultWaiter } from './callbacks/result-waiter.ts';
import { PushConfigStore } from './a2a/push-configs.ts';
import { PushForwarder } from './a2a/push-forwarder.ts';
import { CallbackReader } from './callbacks/callback-reader.ts';
import {
  assignScript,
  cancelScript,
  claimScript,
  createSendPath,
  deliverScript,
  holdScript,
  markSeenScript,
  publishCallbackScript,
  recordPooledScript,
  rejectScript,
  releaseClaimScript,
  replayScript,
  lockScript,
  PoolGauge,
  RoomDrainer,
  ROOM_SCRIPTS,
  scheduleStateScript,
  SnapshotHolder,
  ScheduleStore,
  TaskCanceller,
  unassignScript,
  WaitingRoom,
} from '@agent-reach/dispatch';
import { DeadLetters } from './dlq/dead-letters.ts';
import { Submitter } from './submit/submitter.ts';
import { compileRouterOptions, type RouterOptions } from './options.ts';
import { TaskReader } from './tasks/task-reader.ts';
import { ArchiveReader } from './tasks/archive-reader.ts';
import { TaskEventsReader } from './tasks/task-events.ts';
import { TaskEventsFeed } from './tasks/task-events-feed.ts';
import { InflightQuota } from './quotas/inflight-quota.ts';
import { inflightTakeScript } from './quotas/inflight-take.ts';
import { pushConfigSaveScript } from './a2a/push-config-save.ts';
import { TenantRecords } from './tenants/tenant-records.ts';
import { KeyLimits } from './quotas/key-limits.ts';
import { SharedSettings } from './settings/shared-settings.ts';
import { createRouterObservability } from './plugins/observability.ts';
import { RedisTaskSearch } from './search/redis-search.ts';
import { TaskSearch } from './search/task-search.ts';
import { createEventsReader } from './observability/events-reader.ts';
import { WEBHOOK_SCRIPTS } from './webhooks/webhook-scripts.ts';
import { WebhookTargets } from './webhooks/webhook-targets.ts';
import { WebhookSecrets } from './webhooks/webhook-secrets.ts';
import { WebhookSender } from './webhooks/webhook-sender.ts';
import { WebhookForwarder } from './webhooks/webhook-forwarder.ts';
import { WebhookFailures } from './webhooks/webhook-failures.ts';
import { RegistryForwarder } from './agents/registry-forwarder.ts';

/** A running router. */
export interface RouterService {
  app: Awaited<ReturnType<typeof buildRouterApp>>;
  options: RouterOptions;
  redis: RedisClient;
  events: EventSink;
  snapshot: SnapshotHolder;
  /** The settings shared with registry-sync, as published by it once it has (see SharedSettings). */
  settings: SharedSettings;
  /** Tenant records (`/v1/tenants`): each tenant's weight and bounds, cached per process. */
  tenants: TenantRecords;
  /** Starts listening on options.port/host; returns the address. */
  listen(): Promise<string>;
  /** Stops accepting, finishes in-flight requests, flushes events. Idempotent. */
  close(): Promise<void>;
}

/** Wires the router from settings. */
export async function createRouterService(
  opts: Partial<RouterOptions> = {},
  extra: { logger?: Logger; events?: EventSinkOptions } = {},
): Promise<RouterService> {
  const options = compileRouterOptions(opts);
  const logger = extra.logger ?? serviceLogger('router', options.logLevel);
  // Before any connection: a listener off loopback without an admin key does not start.
  const auth = decideAuth({
    service: 'router',
    setting: options.auth,
    hosts: [options.host],
    adminKey: options.adminKey,
  });
  if (auth.warning) logger.warn({ module: 'auth' }, auth.warning);
  // The shard counts of the due set and of the tasks: the router's own until registry-sync's are
  // read (below).
  let shards = () => options.shards;
  let taskShards = () => options.taskShards;
  const keys = reachKeys(options.prefix, {
    shards: () => shards(),
    taskShards: () => taskShards(),
  });
  // While Redis is away a request fails within a second (503 STORE_UNAVAILABLE) instead of
  // hanging: one reconnection try per command, reconnections at most 400 ms apart, and commands
  // that get no answer (a frozen server) fail after storeTimeoutMs — found by a periodic check
  // rather than ioredis' commandTimeout, which starts a timer for every command.
  const retryStrategy = (times: number) => Math.min(50 * times, 400);
  const connection = { ...options.redisConnection, url: options.redisUrl };
  // Commands go out as they are made, not auto-pipelined: ioredis' auto-pipeline costs a Pipeline,
  // two promises and a copy per command, which measured more than the socket writes it saves
  // (router CPU per task −6 to −19 % in floods, −2 to −25 % at 200/s;
  // bench/results/2026-12-06-auto-pipelining.md). The sends' own batches (claims, deliveries,
  // watchdog entries) are still one script or one pipeline each, each script call written as one
  // string (service-kit's FlatCommand).
  const redis = createRedis(connection, {
    lazyConnect: true,
    enableAutoPipelining: false,
    maxRetriesPerRequest: 1,
    retryStrategy,
  });
  watchClientStuckCommands(redis, options.storeTimeoutMs);
  const subscriber = createRedis(connection, {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    retryStrategy,
  });
  // Only the scripts the router runs (ioredis copies every script defined on a connection onto
  // each pipeline it makes): submissions and their deliveries, pool entries, refusals and dead
  // letters with their callbacks, DLQ replays. A script this connection comes to run is added
  // here; assign and unassign send the waiting rooms' tasks (registry-sync's retries too).
  // The quota's and the A2A push configs' scripts too, though a deployment may use neither; the
  // lease lock for the webhook forwarder's turn.
  loadScripts(redis, [
    inflightTakeScript,
    pushConfigSaveScript,
    claimScript,
    releaseClaimScript,
    markSeenScript,
    deliverScript,
    recordPooledScript,
    rejectScript,
    publishCallbackScript,
    replayScript,
    cancelScript,
    holdScript,
    scheduleStateScript,
    assignScript,
    unassignScript,
    ...ROOM_SCRIPTS,
    ...WEBHOOK_SCRIPTS,
    lockScript,
  ]);
  // A Redis briefly away at start-up is waited for, 10 s at most; then the error names it.
  await connectRedis(redis, connection);
  await connectRedis(subscriber, connection);
  const apiKeys = new ApiKeyStore({ redis, keys, adminKey: options.adminKey });
  await apiKeys.listen(subscriber);
  for (const conn of [redis, subscriber]) {
    conn.on('error', (err: Error) =>
      logger.warn({ err, module: 'redis' }, 'redis connection error'),
    );
  }
  const pool = new BlockingPool(() => {
    const conn = createRedis(connection, { maxRetriesPerRequest: 1, retryStrategy });
    conn.on('error', (err: Error) =>
      logger.debug({ err, module: 'redis' }, 'blocking connection error'),
    );
    return conn;
  }, options.callbackConnections);
  // The live tails of GET /v1/tasks/:id/events: at most eventsConnections blocking connections.
  const eventsPool = new BlockingPool(() => {
    const conn = createRedis(connection, { maxRetriesPerRequest: 1, retryStrategy });
    conn.on('error', (err: Error) =>
      logger.debug({ err, module: 'redis' }, 'task events connection error'),
    );
    return conn;
  }, options.eventsConnections);
  const observability = createRouterObservability({
    redis,
    connection,
    keys,
    logger,
  });
  const events = observability.observe(createEventSink({ ...(extra.events ?? {}), logger }));
  // registry-sync's lease, retry and retention settings win over this router's own.
  const shared = new SharedSettings({ redis, keys, own: options, given: opts, logger });
  shards = () => shared.shards;
  taskShards = () => shared.taskShards;
  await shared.start(subscriber, options.snapshotIntervalMs);
  // REACH_TASK_ARCHIVE: a cancel or a death on arrival appends the task to the archive outbox.
  const live = shared.over({
    ...options,
    archive: taskArchiveEnabled(options.taskArchive, extra.events?.url),
  });
  const snapshot = new SnapshotHolder({
    redis,
    subscriber,
    keys,
    intervalMs: options.snapshotIntervalMs,
    logger,
  });
  await snapshot.start();
  observability.watchSnapshot(snapshot);
  const tasks = new TaskReader({
    redis,
    keys,
    archive: new ArchiveReader({
      redis,
      keys,
      influx: influxSourceFrom(extra.events),
      tombstoneDays: () => options.archiveTombstoneDays,
    }),
  });
  const tenants = new TenantRecords({ redis, keys });
  const {
    delivery,
    sender,
    deadLetters: deaths,
    callbacks: publisher,
    shadows,
  } = createSendPath({
    redis,
    keys,
    snapshot,
    events,
    logger,
    settings: live,
  });
  await shadows.start();
  // created_at on this process's clock while Redis's agrees with it (dispatch/redis-clock.ts).
  delivery.followRedisTime();
  const watermark = () => shared.watermark;
  // The waiting rooms (docs/ROUTING.md): this router sends their tasks as it sees slots free.
  const room = new WaitingRoom(redis, keys);
  const pools = new PoolGauge(redis, keys);
  const drainer = new RoomDrainer({
    redis,
    keys,
    snapshot,
    watermark,
    sender,
    delivery,
    room,
    pools,
    logger,
    dispatchGraceMs: live.dispatchGraceMs,
    reserved: async (capability) => Number(await redis.get(keys.retriesWaiting(capability))) || 0,
  });
  drainer.start();
  // Webhook callbacks (docs/PROTOCOL.md): the targets written at submission, the tenants' secrets.
  const webhookAllowed = {
    hosts: options.webhookHosts,
    loopback: outboundLoopbackAllowed(options.outboundLoopback, auth.required),
  };
  const webhookTargets = new WebhookTargets({ redis, keys, allowed: webhookAllowed });
  const webhookSecrets = new WebhookSecrets({
    redis,
    keys,
    graceMs: () => options.webhookSecretGraceS * 1000,
  });
  const submitter = new Submitter({
    redis,
    keys,
    snapshot,
    watermark,
    delivery,
    sender,
    deadLetters: deaths,
    tasks,
    settings: live,
    logger,
    events,
    room,
    drainer,
    pools,
    tenants,
    webhooks: webhookTargets,
  });
  const deadLetters = new DeadLetters({ redis, keys });
  const canceller = new TaskCanceller({
    redis,
    keys,
    callbacks: publisher,
    events,
    logger,
    // A cancelled task stays readable as long as a dead letter.
    retentionS: () => live.dlqRetentionS,
    archive: () => live.archive,
  });
  const limits = new KeyLimits({
    redis,
    keys,
    defaults: { ratePerS: options.keyRatePerS, maxInflight: options.keyMaxInflight },
  });
  const quotas = { limits, inflight: new InflightQuota({ redis, keys, limits }) };
  const callbacks = new CallbackReader({ redis, pool, keys });
  const waitConn = createRedis(connection, { maxRetriesPerRequest: null, retryStrategy });
  waitConn.on('error', (err: Error) =>
    logger.debug({ err, module: 'redis' }, 'result wait connection error'),
  );
  const waiter = new ResultWaiter({
    conn: waitConn,
    keys,
    logger: logger.child({ module: 'result-waiter' }),
  });
  waiter.start();
  // A2A push notifications (docs/A2A.md): the configs, and this router's share of the webhooks.
  const a2aPush = new PushConfigStore({
    redis,
    keys,
    allowed: {
      hosts: options.a2aPushHosts,
      loopback: outboundLoopbackAllowed(options.outboundLoopback, auth.required),
    },
  });
  const pushConn = createRedis(connection, { maxRetriesPerRequest: null, retryStrategy });
  pushConn.on('error', (err: Error) =>
    logger.debug({ err, module: 'redis' }, 'A2A push connection error'),
  );
  const pushForwarder = new PushForwarder({
    conn: pushConn,
    redis,
    keys,
    store: a2aPush,
    tasks,
    logger: logger.child({ module: 'a2a-push' }),
    retentionS: () => live.callbackRetentionS,
  });
  pushForwarder.start();
  // This router's share of the webhooks: items made deliveries, deliveries sent (both from Redis).
  const webhookSender = new WebhookSender({
    redis,
    keys,
    secrets: webhookSecrets,
    allowed: webhookAllowed,
    settings: options,
    logger: logger.child({ module: 'webhooks' }),
    counter: observability.metrics.webhooks,
  });
  const webhookConn = createRedis(connection, { maxRetriesPerRequest: null, retryStrategy });
  webhookConn.on('error', (err: Error) =>
    logger.debug({ err, module: 'redis' }, 'webhook items connection error'),
  );
  const webhookForwarder = new WebhookForwarder({
    conn: webhookConn,
    redis,
    keys,
    callbacks: publisher,
    logger: logger.child({ module: 'webhooks' }),
    made: () => webhookSender.nudge(),
    retentionS: () => live.callbackRetentionS,
  });
  webhookForwarder.start();
  webhookSender.start();
  const taskEventsReader = new TaskEventsReader({ redis, keys });
  const taskEventsFeed = new TaskEventsFeed({
    reader: taskEventsReader,
    pool: eventsPool,
    keys,
    logger: logger.child({ module: 'task-events' }),
  });
  // Hosts and origins answered, proxies trusted, failed authentications limited (SECURITY.md, Edges).
  const guards = edgeGuardsFrom(options, redis, keys);
  const eventsReader = createEventsReader(extra.events, options.timelineLookback);
  const search = new TaskSearch({
    redis: new RedisTaskSearch({ redis, keys, scanMax: () => options.searchScanMax }),
    influx: eventsReader.influx,
    retentionS: () => options.taskRetentionS,
    archiveMax: () => options.searchArchiveMax,
  });
  const app = await buildRouterApp({
    redis,
    submitter,
    tasks,
    callbacks,
    waiter,
    snapshot,
    deadLetters,
    canceller,
    schedules: {
      store: new ScheduleStore({ redis, keys }),
      limits: live,
      webhooks: webhookTargets,
    },
    keys,
    watermark,
    maxPayloadBytes: options.maxPayloadBytes,
    auth: { required: auth.required, store: apiKeys, failures: guards.failures },
    edge: guards.edge,
    quotas,
    logger,
    observability,
    eventsReader,
    taskEvents: {
      reader: taskEventsReader,
      feed: taskEventsFeed,
    },
    a2aPush,
    webhooks: {
      failures: new WebhookFailures({ redis, keys, resent: () => webhookSender.nudge() }),
      secrets: webhookSecrets,
    },
    tenants,
    room,
    shadows,
    search,
    registry: new RegistryForwarder({ url: options.registryUrl }),
  });

  let closing: Promise<void> | undefined;
  return {
    app,
    options,
    redis,
    events,
    snapshot,
    settings: shared,
    tenants,
    listen: () => app.listen({ port: options.port, host: options.host }),
    close: () =>
      (closing ??= (async () => {
        // Long-polls and submissions waiting for a slot end first so app.close() does not wait for them.
        pool.close();
        taskEventsFeed.close();
        eventsPool.close();
        submitter.close();
        drainer.close();
        shadows.stop();
        delivery.close();
        await waiter.close();
        await pushForwarder.close();
        await webhookForwarder.close();
        await webhookSender.close();
        await app.close();
        shared.close();
        await snapshot.close();
        await events.close();
        await redis.quit().catch(() => undefined);
      })()),
  };
}
