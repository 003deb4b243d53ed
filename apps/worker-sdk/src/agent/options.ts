import { randomUUID } from 'node:crypto';
import { CLIENT_DEFAULTS, isValidId, PROBE_CAPABILITY, type Channel } from '@agent-reach/protocol';
import type { RedisOptions } from 'ioredis';
import type { RedisConnectionExtras } from '@agent-reach/service-kit/redis';
import { pino, type Logger } from 'pino';
import { compileBackoff, type BackoffOptions, type CompiledBackoff } from '../util/backoff.ts';
import { clientSettingFromEnv } from '../util/client-env.ts';
import { intIn } from '../util/int-in.ts';
import type { HealthCheck } from './probe.ts';
import { compileCard } from './card-options.ts';
import type { TaskHandler } from './task.ts';

/** Settings of a {@link ReachAgent}; resolved once by {@link compileAgentOptions}. */
export interface ReachAgentOptions {
  /**
   * Base URL of registry-sync.
   * @default process.env.REACH_REGISTRY_URL, else 'http://127.0.0.1:8080' (docs/SETTINGS.md)
   */
  registryUrl?: string;
  /**
   * Base URL of a router (or the load balancer in front of several): where `TaskContext.submit()`
   * sends the tasks a handler submits.
   * @default process.env.REACH_ROUTER_URL, else 'http://127.0.0.1:8081' (docs/SETTINGS.md)
   */
  routerUrl?: string;
  /**
   * Redis URL. Tasks are read from and acks written to this Redis.
   * @default 'redis://127.0.0.1:6379'
   */
  redisUrl?: string;
  /**
   * Extra ioredis options, applied on top of `redisUrl` (TLS, password, sentinels, …).
   * @default {}
   */
  redisOptions?: RedisOptions;
  /**
   * TLS files (for a `rediss://` URL), credentials and sentinels besides `redisUrl`;
   * {@link redisConnectionFromEnv} reads them from REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY,
   * REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINELS and REDIS_SENTINEL_NAME.
   * @default {} (the URL alone)
   */
  redisConnection?: RedisConnectionExtras;
  /**
   * API key sent as `Authorization: Bearer <key>` when registering: a key of role `agent` (or
   * `operator`) whose capabilities cover the agent's. The agent is registered in the key's tenant.
   * Not needed while the registry runs without auth (loopback).
   * @default process.env.REACH_KEY
   */
  apiKey?: string;
  /**
   * Stable name of the agent (`^[A-Za-z0-9_.:-]{1,128}$`). Required.
   * @default none
   */
  agentId: string;
  /**
   * This process. Keep it across restarts to pick up the tasks this instance read and never
   * acknowledged; a new one for a known agent raises its epoch and fences the old instance.
   * @default a random UUID
   */
  instanceId?: string;
  /**
   * Capabilities served (1–64 ids). Required unless `card` or `cardUrl` supplies them: the
   * card's skills are added to these.
   * @default none
   */
  capabilities?: readonly string[];
  /**
   * The agent's A2A AgentCard, sent with each registration: each skill's `id` is a capability,
   * the placement extension gives region and tags, name and the like go to meta (`card_*`);
   * `GET /v1/agents/:id/card` serves it (docs/PROTOCOL.md, Registering with an AgentCard).
   * @default undefined
   */
  card?: Record<string, unknown>;
  /**
   * Where registry-sync fetches the agent's AgentCard instead (one of its REACH_CARD_HOSTS, or a
   * loopback host as its REACH_OUTBOUND_LOOPBACK allows); push agents only. Not with `card`.
   * @default undefined
   */
  cardUrl?: string;
  /**
   * Most tasks run at once; never more are read from the inbox and pools together.
   * @default 1
   */
  maxConcurrency?: number;
  /**
   * Region label the router may filter on. A pull agent leaves pool tasks that ask for another
   * region with `region_policy: 'strict'` to agents of that region.
   * @default undefined (the server's default)
   */
  region?: string;
  /**
   * Routing tags besides the capabilities (0–64 ids): a task that asks for tags goes only to an
   * agent that has each of them as a tag or capability. A pull agent leaves pool tasks that ask
   * for a tag it lacks to agents that have it.
   * @default []
   */
  tags?: readonly string[];
  /**
   * Delivery channel. `push`: the router sends each task to this agent's own inbox stream.
   * `pull`: the agent also takes tasks from the shared pool stream of each of its capabilities
   * (batch work, or capabilities only pull agents serve), as many as it has free slots; its inbox
   * is still read for probes and re-routed tasks.
   * @default 'push'
   */
  channel?: Channel;
  /**
   * Serve every tenant's tasks, not only those of the key's tenant. Only an operator key may
   * register a shared agent (403 FORBIDDEN otherwise).
   * @default false
   */
  shared?: boolean;
  /**
   * Start in observation mode: the agent gets liveness probes only, no caller task, until it is
   * promoted — by an operator (`POST /v1/agents/:id/serve` with an operator key, `reach agents
   * promote <id>`) or by itself with its token (docs/PROTOCOL.md §1).
   * @default false
   */
  observe?: boolean;
  /**
   * Free-form metadata stored with the registration (at most 32 keys).
   * @default undefined
   */
  meta?: Record<string, unknown>;
  /**
   * JSON Schema of each capability's payload (capability → an object schema, at most 16 KiB as
   * JSON): the input schema of the capability's tool on the router's MCP server (docs/MCP.md).
   * A schema for a capability not served, or one that does not describe an object, is refused at
   * registration (400 INVALID_INPUT_SCHEMA).
   * @default undefined (the tool takes any object)
   */
  inputSchemas?: Record<string, Record<string, unknown>>;
  /**
   * Whether the agent can take tasks as soon as it is registered. `false` starts in two phases:
   * the agent registers with `ready: false` (the registry gives it no tasks: status `STARTING`)
   * and reads nothing until {@link ReachAgent.markReady} is called.
   * @default true
   */
  ready?: boolean;
  /**
   * Runs one task; its resolved value (JSON-serialisable) is the result. Required.
   * @default none
   */
  handler: TaskHandler;
  /**
   * Deep health check, asked on every probe registry-sync sends (about every 10 s): "is the model
   * loaded, is the GPU free". `false`, a throw or no answer within `healthTimeoutMs` fails the
   * probe; `REACH_PROBE_FAILURES` (default 3) failed probes in a row make the agent SUSPECT until
   * one passes, and passed probes bring a DEGRADED agent back. Its `signal` aborts at the timeout.
   * It may answer `{ ok?, dependencies }` instead (`HealthAnswer`): the detail is kept with the
   * agent, and a dependency down on several agents at once is flagged fleet-wide and makes them
   * SUSPECT on that probe (docs/PROTOCOL.md §6, Dependencies).
   * @default undefined (a probe passes when the agent reads it)
   */
  health?: HealthCheck;
  /**
   * How long `health()` may take before its probe fails, in ms.
   * @default 5000
   */
  healthTimeoutMs?: number;
  /**
   * Backoff between registration attempts.
   * @default { baseMs: 500, capMs: 10000, jitter: 0.2 }
   */
  registerRetry?: BackoffOptions;
  /**
   * Backoff after a Redis error in the read loop or when an ack cannot be written.
   * @default { baseMs: 100, capMs: 5000, jitter: 0.2 }
   */
  redisRetry?: BackoffOptions;
  /**
   * `BLOCK` of each XREADGROUP, in ms. Also bounds how long `close()` waits for a read when the
   * unblock command cannot reach Redis.
   * @default 1000
   */
  blockMs?: number;
  /**
   * How long `close()` waits for in-flight tasks before aborting their signals.
   * @default 30000
   */
  shutdownTimeoutMs?: number;
  /**
   * How many completed task_ids (with their result) are remembered, so a task delivered again
   * is answered from memory instead of running twice.
   * @default 10000
   */
  completedCacheSize?: number;
  /**
   * Timeout of each registry HTTP request.
   * @default 5000
   */
  requestTimeoutMs?: number;
  /**
   * pino logger; the SDK logs through children with `module` bindings.
   * @default pino({ name: 'agent-reach' })
   */
  logger?: Logger;
}

/** {@link ReachAgentOptions} with every default filled in and every value checked. */
export interface CompiledAgentOptions {
  readonly registryUrl: string;
  readonly routerUrl: string;
  readonly redisUrl: string;
  readonly redisOptions: RedisOptions;
  readonly redisConnection: RedisConnectionExtras;
  readonly apiKey: string | undefined;
  readonly agentId: string;
  readonly instanceId: string;
  readonly capabilities: readonly string[];
  readonly card: Record<string, unknown> | undefined;
  readonly cardUrl: string | undefined;
  readonly maxConcurrency: number;
  readonly region: string | undefined;
  readonly tags: readonly string[];
  readonly channel: Channel;
  readonly shared: boolean;
  readonly observe: boolean;
  readonly meta: Record<string, unknown> | undefined;
  readonly inputSchemas: Record<string, Record<string, unknown>> | undefined;
  readonly ready: boolean;
  readonly handler: TaskHandler;
  readonly health: HealthCheck | undefined;
  readonly healthTimeoutMs: number;
  readonly registerRetry: CompiledBackoff;
  readonly redisRetry: CompiledBackoff;
  readonly blockMs: number;
  readonly shutdownTimeoutMs: number;
  readonly completedCacheSize: number;
  readonly requestTimeoutMs: number;
  readonly logger: Logger;
}

function id(name: string, value: unknown): string {
  if (!isValidId(value))
    throw new TypeError(
      `${name} must match ^[A-Za-z0-9_.:-]{1,128}$, got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A checked base URL without a trailing slash (a path prefix is kept). */
function baseUrl(value: string): string {
  return new URL(value).toString().replace(/\/+$/, '');
}

/** Fills in defaults and checks every setting; throws a `TypeError`/`RangeError` naming the bad one. */
export function compileAgentOptions(options: ReachAgentOptions): CompiledAgentOptions {
  if (typeof options.handler !== 'function') throw new TypeError('handler must be a function');
  if (options.health !== undefined && typeof options.health !== 'function')
    throw new TypeError('health must be a function');
  const capabilities = [...(options.capabilities ?? [])];
  const hasCard = options.card !== undefined || options.cardUrl !== undefined;
  if ((capabilities.length < 1 && !hasCard) || capabilities.length > 64)
    throw new RangeError('capabilities must hold 1–64 ids (0–64 with a card or cardUrl)');
  capabilities.forEach((c, i) => id(`capabilities[${i}]`, c));
  // Probes are answered by the SDK itself; a handler would never see tasks of this capability.
  if (capabilities.includes(PROBE_CAPABILITY))
    throw new TypeError(`capability ${PROBE_CAPABILITY} is reserved for liveness probes`);
  if (new Set(capabilities).size !== capabilities.length)
    throw new TypeError('capabilities must be unique');
  const channel = options.channel ?? 'push';
  if (channel !== 'push' && channel !== 'pull')
    throw new TypeError(`channel must be push or pull, got ${String(channel)}`);
  if (options.region !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(options.region)) {
    throw new TypeError(
      `region must match ^[A-Za-z0-9_.-]{1,64}$, got ${JSON.stringify(options.region)}`,
    );
  }
  const tags = [...(options.tags ?? [])];
  if (tags.length > 64) throw new RangeError('tags must hold at most 64 ids');
  tags.forEach((t, i) => id(`tags[${i}]`, t));
  if (new Set(tags).size !== tags.length) throw new TypeError('tags must be unique');
  const card = compileCard(options, { capabilities, region: options.region, tags });
  if (options.ready !== undefined && typeof options.ready !== 'boolean')
    throw new TypeError('ready must be a boolean');
  return Object.freeze({
    registryUrl: baseUrl(
      options.registryUrl ?? clientSettingFromEnv('registryUrl') ?? CLIENT_DEFAULTS.registryUrl,
    ),
    routerUrl: baseUrl(
      options.routerUrl ?? clientSettingFromEnv('routerUrl') ?? CLIENT_DEFAULTS.routerUrl,
    ),
    redisUrl: options.redisUrl ?? CLIENT_DEFAULTS.redisUrl,
    redisOptions: options.redisOptions ?? {},
    redisConnection: options.redisConnection ?? {},
    apiKey: options.apiKey ?? clientSettingFromEnv('apiKey'),
    agentId: id('agentId', options.agentId),
    instanceId: id('instanceId', options.instanceId ?? randomUUID()),
    capabilities: Object.freeze(card.capabilities),
    card: card.card,
    cardUrl: card.cardUrl,
    maxConcurrency: intIn('maxConcurrency', options.maxConcurrency ?? 1, 1, 10_000),
    region: card.region,
    tags: Object.freeze(card.tags),
    channel,
    shared: options.shared === true,
    observe: options.observe === true,
    meta: options.meta,
    inputSchemas: options.inputSchemas,
    ready: options.ready ?? true,
    handler: options.handler,
    health: options.health,
    healthTimeoutMs: intIn('healthTimeoutMs', options.healthTimeoutMs ?? 5000, 1, 600_000),
    registerRetry: compileBackoff(options.registerRetry),
    redisRetry: compileBackoff(options.redisRetry, { baseMs: 100, capMs: 5000, jitter: 0.2 }),
    blockMs: intIn('blockMs', options.blockMs ?? 1000, 1, 60_000),
    shutdownTimeoutMs: intIn(
      'shutdownTimeoutMs',
      options.shutdownTimeoutMs ?? 30_000,
      0,
      24 * 3600_000,
    ),
    completedCacheSize: intIn(
      'completedCacheSize',
      options.completedCacheSize ?? 10_000,
      0,
      10_000_000,
    ),
    requestTimeoutMs: intIn('requestTimeoutMs', options.requestTimeoutMs ?? 5000, 1, 600_000),
    logger: options.logger ?? pino({ name: 'agent-reach' }),
  });
}
