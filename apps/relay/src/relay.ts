import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { endpointClient } from './calls/index.ts';
import type { EndpointTarget } from './calls/endpoint-client.ts';
import { EndpointCatalog, type CatalogEntry } from './catalog.ts';
import { Heartbeats } from './heartbeats.ts';
import { Membership } from './membership.ts';
import type { RelayMetrics } from './metrics.ts';
import { ownerOf } from './ownership.ts';
import { Prober } from './prober.ts';
import type { RegistryApi } from './registry-api.ts';
import { ServedAgent } from './served-agent.ts';
import { Waker } from './waker.ts';

/** What a relay runs with. */
export interface RelayCoreOptions {
  redis: RedisClient;
  /** A connection for pub/sub of declaration changes. */
  subscriber: RedisClient;
  keys: ReachKeys;
  registry: RegistryApi;
  metrics: RelayMetrics;
  logger: Logger;
  relayId: string;
  leaseMs: number;
  probeIntervalMs: number;
  checkIntervalMs: number;
  discoverIntervalMs: number;
  sweepMs: number;
  /** Heartbeat interval until a registration says otherwise. @default 5000 */
  heartbeatMs?: number;
  /** How long a closing relay lets running calls finish. @default 10000 */
  graceMs?: number;
  /** Every Redis connection error of the relay's own connections (the wake-up subscriber's). */
  onRedisError?: (err: Error) => void;
}

/** How often ownership is checked against membership and declarations. */
const RECONCILE_MS = 1000;
/** How often every declaration is read again besides change notices. */
const CATALOG_MS = 5000;
/** How many gained agents start at once. */
const START_BATCH = 16;
/** A served agent that failed to start is tried again after this long. */
const RETRY_START_MS = 2000;

/**
 * A relay (docs/ENDPOINTS.md): it holds a membership lease, serves the endpoint agents that
 * rendezvous hashing gives it among the live relays, and for each runs a {@link ServedAgent}:
 * a registered instance reading its inbox on wake-ups and sweeps. Heartbeats go in batches,
 * liveness from the endpoints' own answers.
 */
export class Relay {
  readonly #catalog: EndpointCatalog;
  readonly #membership: Membership;
  readonly #waker: Waker;
  readonly #heartbeats: Heartbeats;
  readonly #prober: Prober;
  readonly #served = new Map<string, ServedAgent>();
  /** Agents whose start failed, with when to try again. */
  readonly #retryAt = new Map<string, number>();
  readonly #timers: NodeJS.Timeout[] = [];
  #beatTimer: NodeJS.Timeout | undefined;
  #beatDueAt = 0;
  #reconciling = false;
  #closed = false;
  #heartbeatMs: number;

  constructor(private readonly o: RelayCoreOptions) {
    this.#heartbeatMs = o.heartbeatMs ?? 5000;
    this.#catalog = new EndpointCatalog({ redis: o.redis, keys: o.keys, logger: o.logger });
    this.#membership = new Membership({
      redis: o.redis,
      keys: o.keys,
      relayId: o.relayId,
      leaseMs: o.leaseMs,
      logger: o.logger,
    });
    this.#waker = new Waker({
      redis: o.redis,
      keys: o.keys,
      logger: o.logger,
      onWake: (id) => this.#served.get(id)?.wake(),
      onResubscribed: () => this.#sweep(),
      onError: (err) => {
        o.logger.warn({ err, module: 'redis' }, 'wake-up subscriber error');
        o.onRedisError?.(err);
      },
    });
    const agents = () => this.#served.values();
    this.#heartbeats = new Heartbeats({ registry: o.registry, logger: o.logger, agents });
    this.#prober = new Prober({
      probeIntervalMs: o.probeIntervalMs,
      checkIntervalMs: o.checkIntervalMs,
      metrics: o.metrics,
      agents,
    });
  }

  /** The agents served now, by id. */
  get served(): ReadonlyMap<string, ServedAgent> {
    return this.#served;
  }

  /** The wake-up subscriber's connection. */
  get wakeClient(): RedisClient {
    return this.#waker.client;
  }

  get members(): readonly string[] {
    return this.#membership.members;
  }

  async start(): Promise<void> {
    const { o } = this;
    await this.#membership.renew();
    await this.#catalog.load();
    o.subscriber.on('message', () => void this.#reloadCatalog());
    await o.subscriber.subscribe(o.keys.endpointsChannel());
    await this.#reconcile();
    const every = (ms: number, fn: () => unknown) => {
      const t = setInterval(() => void fn(), ms);
      t.unref();
      this.#timers.push(t);
    };
    every(Math.floor(o.leaseMs / 3), () => this.#renewMembership());
    every(RECONCILE_MS, () => this.#refreshAndReconcile());
    every(CATALOG_MS, () => this.#reloadCatalog());
    every(o.sweepMs, () => this.#sweep());
    every(o.discoverIntervalMs, () => this.#rediscover());
    this.#scheduleHeartbeats();
    this.#prober.start();
  }

  /** One timer for the heartbeat rounds, set again after each (one, not one per round). */
  #scheduleHeartbeats(): void {
    if (this.#closed) return;
    if (this.#beatTimer) clearTimeout(this.#beatTimer);
    this.#beatDueAt = Date.now() + this.#heartbeatMs;
    this.#beatTimer = setTimeout(() => {
      if (this.#closed) return;
      void this.#heartbeats.beat();
      this.#scheduleHeartbeats();
    }, this.#heartbeatMs);
    this.#beatTimer.unref();
  }

  /**
   * A registration named a shorter heartbeat interval: the rounds follow it from now, not after
   * the round already planned with the longer one (an agent would turn SUSPECT meanwhile).
   */
  #shortenHeartbeats(intervalMs: number): void {
    if (intervalMs >= this.#heartbeatMs) return;
    this.#heartbeatMs = intervalMs;
    if (this.#beatDueAt - Date.now() > intervalMs) this.#scheduleHeartbeats();
  }

  async #renewMembership(): Promise<void> {
    try {
      if (await this.#membership.renew()) await this.#reconcile();
    } catch (err) {
      this.o.logger.warn({ err }, 'membership renewal failed');
    }
  }

  async #refreshAndReconcile(): Promise<void> {
    try {
      await this.#membership.refresh();
      await this.#reconcile();
    } catch (err) {
      this.o.logger.warn({ err }, 'membership read failed');
    }
  }

  async #reloadCatalog(): Promise<void> {
    try {
      await this.#catalog.load();
      await this.#reconcile();
    } catch (err) {
      this.o.logger.warn({ err }, 'reading endpoint declarations failed');
    }
  }

  /** Every served agent reads its inbox: covers a missed wake-up. */
  #sweep(): void {
    for (const a of this.#served.values()) a.wake();
  }

  /** Reads A2A skills and MCP tools again: a changed set registers the agent again. */
  async #rediscover(): Promise<void> {
    for (const a of [...this.#served.values()]) {
      if (a.entry.record.protocol === 'http' || a.state !== 'serving') continue;
      await a
        .rediscover()
        .catch((err: unknown) =>
          this.o.logger.warn({ err, agent_id: a.agentId }, 'reading skills or tools again failed'),
        );
    }
  }

  /**
   * Serves what this relay owns and nothing else: starts the agents it gained, stops those it
   * lost (another relay owns them now: no deregister, the new owner's epoch fences this one) or
   * whose declaration is gone (deregistered), and applies a changed declaration in place.
   */
  async #reconcile(): Promise<void> {
    if (this.#reconciling || this.#closed) return;
    this.#reconciling = true;
    try {
      const members = this.#membership.members;
      this.o.metrics.relays.set(members.length);
      const entries = this.#catalog.entries;
      for (const [id, agent] of [...this.#served]) {
        const entry = entries.get(id);
        const owned = entry !== undefined && ownerOf(id, members) === this.o.relayId;
        const live = agent.state !== 'fenced' && agent.state !== 'stopped';
        if (owned && live && entry.record.updated_at !== agent.entry.record.updated_at) {
          await agent
            .update(entry, endpointClient(targetOf(entry)))
            .catch((err: unknown) =>
              this.o.logger.warn({ err, agent_id: id }, 'changed declaration not applied'),
            );
          continue;
        }
        if (owned && live) continue;
        // A fenced agent this relay still owns is registered again at once.
        if (agent.state === 'fenced') this.#retryAt.set(id, 0);
        this.#served.delete(id);
        await this.#waker.remove(id);
        void agent.stop({ deregister: entry === undefined, graceMs: this.o.graceMs ?? 10_000 });
      }
      const now = Date.now();
      const gained = [...entries.values()].filter(
        (e) =>
          !this.#served.has(e.record.agent_id) &&
          ownerOf(e.record.agent_id, members) === this.o.relayId &&
          (this.#retryAt.get(e.record.agent_id) ?? 0) <= now,
      );
      // A few at a time: a relay taking over a thousand agents does not wait for each in turn.
      for (let i = 0; i < gained.length; i += START_BATCH)
        await Promise.all(gained.slice(i, i + START_BATCH).map((e) => this.#serve(e)));
      let served = 0;
      let down = 0;
      for (const a of this.#served.values()) {
        if (a.state !== 'drained') served++;
        if (!a.reachable) down++;
      }
      this.o.metrics.served.set(served);
      this.o.metrics.unreachable.set(down);
    } finally {
      this.#reconciling = false;
    }
  }

  async #serve(entry: CatalogEntry): Promise<void> {
    const id = entry.record.agent_id;
    const agent = new ServedAgent({
      entry,
      relayId: this.o.relayId,
      redis: this.o.redis,
      registry: this.o.registry,
      client: endpointClient(targetOf(entry)),
      metrics: this.o.metrics,
      logger: this.o.logger,
      onReachability: () => void this.#heartbeats.beat(),
    });
    this.#served.set(id, agent);
    try {
      await this.#waker.add(id);
      await agent.start();
      this.#retryAt.delete(id);
      if (agent.session) this.#shortenHeartbeats(agent.session.heartbeat_interval_ms);
    } catch (err) {
      this.o.logger.warn({ err, agent_id: id }, 'serving an endpoint agent failed; trying again');
      this.#served.delete(id);
      await this.#waker.remove(id);
      await agent.client.close().catch(() => undefined);
      this.#retryAt.set(id, Date.now() + RETRY_START_MS);
    }
  }

  /**
   * Stops: reads nothing more, lets running calls finish and report, deregisters every instance,
   * then leaves the membership (the other relays take the agents at their next check).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    if (this.#beatTimer) clearTimeout(this.#beatTimer);
    this.#prober.stop();
    // Running calls finish and report under this relay's epochs before another relay takes over.
    await Promise.all(
      [...this.#served.values()].map((a) =>
        a.stop({ deregister: true, graceMs: this.o.graceMs ?? 10_000 }),
      ),
    );
    this.#served.clear();
    await this.#membership.leave().catch(() => undefined);
    await this.#waker.close();
  }
}

/** The call target of a declaration: its secrets become headers. */
export function targetOf(entry: CatalogEntry): EndpointTarget {
  const { record, secrets } = entry;
  const headers: Record<string, string> = { ...(secrets.headers ?? {}) };
  if (secrets.bearer_secret) headers.authorization = `Bearer ${secrets.bearer_secret}`;
  return {
    agentId: record.agent_id,
    protocol: record.protocol,
    url: record.url,
    timeoutMs: record.timeout_ms,
    headers,
    options: record.options ?? {},
    ...(record.health_url ? { healthUrl: record.health_url } : {}),
  };
}
