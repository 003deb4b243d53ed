import { DEFAULT_PREFIX } from '../keys.ts';
import { defaultsOf, type SettingsTable } from './define.ts';
import {
  DEFAULT_PORTS,
  hostListFrom,
  originListFrom,
  PREFIX_PATTERN,
  proxyListFrom,
} from './formats.ts';

/** Where the options of the Redis connection extras come from. */
const REDIS_EXTRAS = 'redisExtrasFromEnv (service-kit, the `redisConnection` option)';
/** Where the event sink's settings come from. */
const EVENT_SINK = 'eventSinkOptionsFromEnv (events)';
/** Where tracing is turned on. */
const TRACING = 'startTracing (service-kit)';

/**
 * The settings both services read, one row each (define.ts says what a row holds). The options
 * rows come first, in the order the services' environment schemas have always listed them; the
 * rows with `readBy` document variables that other code reads (Redis TLS and credentials, the
 * event sink, tracing). Set those marked `published` on registry-sync: it publishes them and
 * routers use its values, warning about one of their own that differs.
 */
export const SHARED_SETTINGS = {
  host: {
    env: 'HOST',
    type: 'string',
    default: '127.0.0.1',
    essential: true,
    doc: 'Address to listen on; anything but loopback requires API keys and `REACH_ADMIN_KEY` (docs/SECURITY.md).',
  },
  auth: {
    env: 'REACH_AUTH',
    type: 'enum',
    values: ['auto', 'off', 'required'],
    default: 'auto',
    essential: true,
    doc: '`auto`: API keys required unless the service listens on loopback only; `off`: never (loopback only); `required`: always.',
  },
  adminKey: {
    env: 'REACH_ADMIN_KEY',
    type: 'string',
    minLength: 1,
    essential: true,
    doc: 'The bootstrap operator key of the default tenant, 32+ characters; never stored.',
  },
  taskRetentionS: {
    env: 'REACH_TASK_RETENTION_S',
    type: 'integer',
    minimum: 1,
    default: 86_400,
    doc: 'How long a final task’s state stays in Redis; task search (`GET /v1/tasks`) asks InfluxDB only for tasks older than this.',
  },
  shadowRate: {
    env: 'REACH_SHADOW_RATE',
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: 0,
    doc: 'Share of each capability’s tasks mirrored to its agents in observation mode, unless `PUT /v1/capabilities/:capability/shadow` set the capability’s own.',
  },
  allowedHosts: {
    env: 'REACH_ALLOWED_HOSTS',
    type: 'parsed',
    format: 'host names, comma-separated',
    parse: hostListFrom,
    default: [],
    doc: 'With API keys required: the host names a request’s `Host` may name besides loopback (empty: any). Without keys the services answer loopback hosts only (docs/SECURITY.md, DNS rebinding).',
  },
  allowedOrigins: {
    env: 'REACH_ALLOWED_ORIGINS',
    type: 'parsed',
    format: 'origins, comma-separated',
    parse: originListFrom,
    default: [],
    doc: 'With API keys required: browser origins (`https://host[:port]`) that may call the API besides the service’s own; another origin gets 403 ORIGIN_NOT_ALLOWED.',
  },
  trustedProxies: {
    env: 'REACH_TRUSTED_PROXIES',
    type: 'parsed',
    format: 'addresses or CIDR ranges, comma-separated',
    parse: proxyListFrom,
    default: [],
    doc: 'Proxies whose `X-Forwarded-For` names the client (fastify `trustProxy`); from any other peer the header is ignored. `npm start -- --cluster` sets its nginx.',
  },
  authFailureLimit: {
    env: 'REACH_AUTH_FAILURE_LIMIT',
    type: 'integer',
    minimum: 1,
    default: 20,
    doc: 'Failed authentications (a key or agent token that is not valid) one client address may make per window before every request of it needing a key gets 429 AUTH_FAILURES, shared by all processes through Redis.',
  },
  authFailureWindowS: {
    env: 'REACH_AUTH_FAILURE_WINDOW_S',
    type: 'integer',
    minimum: 1,
    maximum: 86_400,
    default: 60,
    doc: 'The window of `REACH_AUTH_FAILURE_LIMIT`, seconds; a limited address is answered 429 until it ends.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    type: 'string',
    format: 'URL or socket path',
    default: `redis://127.0.0.1:${DEFAULT_PORTS.redis}`,
    essential: true,
    doc: 'The store: `redis://[user:password@]host[:port][/db]`, `rediss://…` for TLS, or a Unix socket’s path.',
  },
  prefix: {
    env: 'REACH_PREFIX',
    type: 'string',
    pattern: PREFIX_PATTERN,
    default: DEFAULT_PREFIX,
    doc: 'Prefix of every Redis key; tests use a random one.',
  },
  offlineMs: {
    env: 'REACH_OFFLINE_MS',
    type: 'integer',
    minimum: 200,
    default: 30_000,
    published: 'followed',
    doc: 'Lease age past which an agent is OFFLINE and gets no task; its tasks are re-routed.',
  },
  deliveryLeaseMs: {
    env: 'REACH_DELIVERY_LEASE_MS',
    type: 'integer',
    minimum: 200,
    default: 600_000,
    published: 'followed',
    doc: 'Lease age past which no task is delivered to an agent whatever its last status (re-checked at delivery): how long the data plane runs on while no registry-sync renews leases (docs/RELIABILITY.md, Without registry-sync); `REACH_OFFLINE_MS` when that is longer.',
  },
  snapshotIntervalMs: {
    env: 'REACH_SNAPSHOT_MS',
    type: 'integer',
    minimum: 50,
    default: 5000,
    published: 'listed',
    doc: 'registry-sync writes the registry snapshot this often at least (a status change writes one within 50 ms); routers re-read it this often besides notifications.',
  },
  dispatchGraceMs: {
    env: 'REACH_DISPATCH_GRACE_MS',
    type: 'integer',
    minimum: 100,
    default: 10_000,
    published: 'followed',
    doc: 'A claimed task still undelivered this long is re-driven by registry-sync.',
  },
  watermark: {
    env: 'REACH_WATERMARK',
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 1,
    default: 0.85,
    published: 'followed',
    doc: 'An agent at or above this share of its max_concurrency is skipped while another has room; retries route with it too.',
  },
  dlqRetentionS: {
    env: 'REACH_DLQ_RETENTION_S',
    type: 'integer',
    minimum: 1,
    default: 604_800,
    published: 'followed',
    doc: 'How long dead letters are kept (7 days).',
  },
  sessionTtlS: {
    env: 'REACH_SESSION_TTL_S',
    type: 'integer',
    minimum: 1,
    default: 3600,
    doc: 'How long a session sticks to the agent its last task was sent to.',
  },
  callbackRetentionS: {
    env: 'REACH_CALLBACK_RETENTION_S',
    type: 'integer',
    minimum: 1,
    default: 604_800,
    published: 'followed',
    doc: 'How long an idle callback topic is kept.',
  },
  callbackMaxLen: {
    env: 'REACH_CALLBACK_MAXLEN',
    type: 'integer',
    minimum: 100,
    default: 100_000,
    published: 'followed',
    doc: 'Approximate cap on the entries of one callback topic.',
  },
  taskArchive: {
    env: 'REACH_TASK_ARCHIVE',
    type: 'enum',
    values: ['auto', 'on', 'off'],
    default: 'auto',
    doc: 'Whether final tasks are archived to InfluxDB (`task_archive`, docs/OBSERVABILITY.md, History) through a Redis outbox, so `GET /v1/tasks/:id` answers past their Redis retention: `auto`, when `INFLUX_URL` is set; `on`; `off`. Set it alike on every process.',
  },
  archiveTombstoneDays: {
    env: 'REACH_ARCHIVE_TOMBSTONE_DAYS',
    type: 'integer',
    minimum: 1,
    maximum: 3660,
    default: 30,
    doc: 'How long an archived task can be read back by id: its tombstone (task_id → end time, a few bytes in Redis) tells where in InfluxDB to look; match the InfluxDB retention policy.',
  },
  shards: {
    env: 'REACH_SHARDS',
    type: 'integer',
    minimum: 1,
    maximum: 1024,
    default: 1,
    published: 'followed',
    doc: 'Shards of the acks stream and the due set, each under its own hash tag so a Redis Cluster has no single hot slot; may grow while tasks are in flight, never shrink.',
  },
  taskShards: {
    env: 'REACH_TASK_SHARDS',
    type: 'integer',
    minimum: 1,
    maximum: 1024,
    default: 1,
    published: 'followed',
    doc: 'Task shards: every key of a task lives under its shard’s hash tag, so one script call claims a tick’s tasks, or steps an ack batch’s, per shard. 1 on a standalone Redis; on a Cluster a multiple of its masters (docs/PERFORMANCE.md, Task shards). Fixed while tasks are kept: registry-sync refuses to start with another count than the stored one while any task exists (docs/DEPLOY.md).',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    type: 'string',
    default: 'info',
    doc: 'Log level: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
  },
  outboundLoopback: {
    env: 'REACH_OUTBOUND_LOOPBACK',
    type: 'enum',
    values: ['auto', 'on', 'off'],
    default: 'auto',
    doc: 'Whether a URL a caller names (`card_url`, an A2A push URL, an endpoint’s `url` and `health_url`) may be a loopback host besides the `*_HOSTS` lists: `auto`, only while API keys are not required; `on`, also with keys required (key holders can then reach this machine’s own services; docs/SECURITY.md); `off`, never. The operator’s `REACH_ENDPOINTS_FILE` may name loopback hosts unless `off`.',
  },

  redisTlsCa: {
    env: 'REDIS_TLS_CA',
    type: 'string',
    format: 'file path',
    readBy: REDIS_EXTRAS,
    doc: 'PEM file of the CA that signed the Redis server’s certificate (with a `rediss://` URL).',
  },
  redisTlsCert: {
    env: 'REDIS_TLS_CERT',
    type: 'string',
    format: 'file path',
    readBy: REDIS_EXTRAS,
    doc: 'PEM file of this client’s certificate, for a server that asks for one; with `REDIS_TLS_KEY`.',
  },
  redisTlsKey: {
    env: 'REDIS_TLS_KEY',
    type: 'string',
    format: 'file path',
    readBy: REDIS_EXTRAS,
    doc: 'PEM file of this client’s private key; with `REDIS_TLS_CERT`.',
  },
  redisUsername: {
    env: 'REDIS_USERNAME',
    type: 'string',
    readBy: REDIS_EXTRAS,
    doc: 'Redis ACL user; wins over the URL’s.',
  },
  redisPassword: {
    env: 'REDIS_PASSWORD',
    type: 'string',
    readBy: REDIS_EXTRAS,
    doc: 'Redis password; wins over the URL’s.',
  },
  redisSentinels: {
    env: 'REDIS_SENTINELS',
    type: 'string',
    format: 'host:port, comma-separated',
    readBy: REDIS_EXTRAS,
    doc: '`host:port,…`: ask these Sentinels for the master; the URL then gives only scheme, credentials and database.',
  },
  redisSentinelName: {
    env: 'REDIS_SENTINEL_NAME',
    type: 'string',
    default: 'mymaster',
    readBy: REDIS_EXTRAS,
    doc: 'The master’s name at the Sentinels.',
  },
  redisClusterNodes: {
    env: 'REDIS_CLUSTER_NODES',
    type: 'string',
    format: 'host:port, comma-separated',
    readBy: REDIS_EXTRAS,
    doc: '`host:port,…`: seed nodes of a Redis Cluster (docs/DEPLOY.md); the URL then gives only scheme and credentials.',
  },
  influxUrl: {
    env: 'INFLUX_URL',
    type: 'string',
    format: 'URL',
    essential: true,
    readBy: EVENT_SINK,
    doc: `InfluxDB base URL the stage events are written to; unset: none are (\`npm start\` runs one, on port ${DEFAULT_PORTS.influx} when free).`,
  },
  influxBucket: {
    env: 'INFLUX_BUCKET',
    type: 'string',
    default: 'reach',
    readBy: EVENT_SINK,
    doc: 'InfluxDB database (1.x) or bucket (2.x) of the events.',
  },
  influxApi: {
    env: 'INFLUX_API',
    type: 'enum',
    values: ['auto', 'v1', 'v2'],
    default: 'auto',
    readBy: EVENT_SINK,
    doc: '`v1` (`/write`) or `v2` (`/api/v2/write`); `auto` finds out.',
  },
  influxToken: {
    env: 'INFLUX_TOKEN',
    type: 'string',
    readBy: EVENT_SINK,
    doc: 'InfluxDB token, sent with every write.',
  },
  influxOrg: {
    env: 'INFLUX_ORG',
    type: 'string',
    readBy: EVENT_SINK,
    doc: 'InfluxDB 2 organisation.',
  },
  influxV2Url: {
    env: 'INFLUX_V2_URL',
    type: 'string',
    format: 'URL',
    readBy: '`npm start` (launcher) and the test services (testkit)',
    doc: 'Where the InfluxDB 2 API of `INFLUX_URL` answers, when elsewhere (the local InfluxDB 1.x behind nginx).',
  },
  logFormat: {
    env: 'LOG_FORMAT',
    type: 'enum',
    values: ['pretty', 'json'],
    default: 'pretty',
    readBy: '`npm start` (launcher)',
    doc: 'How `npm start` prints: readable lines for a person at a terminal, or `json`, one object a line as the services log.',
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    type: 'string',
    format: 'URL',
    readBy: TRACING,
    doc: 'OpenTelemetry collector to export spans to over OTLP/HTTP (docs/OBSERVABILITY.md, Traces); unset: no spans, at no cost.',
  },
  otlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    type: 'string',
    format: 'URL',
    readBy: TRACING,
    doc: 'The same for traces only; either one turns span export on.',
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    type: 'string',
    defaultDoc: 'agent-reach-<service>',
    readBy: TRACING,
    doc: '`service.name` of the spans.',
  },
  requestContext: {
    env: 'REACH_REQUEST_CONTEXT',
    type: 'enum',
    values: ['recent', 'exact'],
    default: 'recent',
    readBy: 'runMain (service-kit)',
    doc: 'How a failure is tied to its request: `recent` names the requests around it, `exact` the one (costs 10–20 % CPU; docs/OPERATIONS.md).',
  },
  idleCompact: {
    env: 'REACH_IDLE_COMPACT',
    type: 'enum',
    values: ['on', 'off'],
    default: 'on',
    readBy: 'runMain (service-kit)',
    doc: "Whether a service compacts its heap once its event loop goes quiet after the heap grew by 16 MiB, giving a burst's memory back (a pause of up to about 0.2 s while at most 5 % busy; docs/OPERATIONS.md).",
  },
} as const satisfies SettingsTable;

/**
 * Defaults of the settings both services read, from {@link SHARED_SETTINGS}: the services' own
 * defaults (`ROUTER_DEFAULTS`, `REGISTRY_DEFAULTS`) include these, and their environment schemas
 * carry no defaults.
 */
export const SHARED_DEFAULTS = Object.freeze(defaultsOf(SHARED_SETTINGS));
