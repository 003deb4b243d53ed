import {
  ControlField,
  decodeTask,
  FailureCode,
  fieldsToRecord,
  PROBE_CAPABILITY,
  WORKER_GROUP,
  type BatchBeat,
  type BatchBeatReply,
  type RegisterReply,
  type TaskMessage,
} from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { CatalogEntry } from './catalog.ts';
import type { EndpointClient } from './calls/endpoint-client.ts';
import { resolveCapabilities, type ResolvedCapabilities } from './capabilities.ts';
import { instanceIdOf } from './ownership.ts';
import { RelayAcks } from './relay-acks.ts';
import type { RegistryApi } from './registry-api.ts';
import type { RelayMetrics } from './metrics.ts';
import { isUnreachable, runTaskCall, type StopReason } from './task-call.ts';

/** What a served agent needs from its relay. */
export interface ServedAgentOptions {
  entry: CatalogEntry;
  relayId: string;
  redis: RedisClient;
  registry: RegistryApi;
  client: EndpointClient;
  metrics: RelayMetrics;
  logger: Logger;
  /** Called when the agent's reachability changed: report it now, not at the next beat. */
  onReachability(agent: ServedAgent): void;
}

/** A call in flight. */
interface Running {
  attempt: number;
  abort: AbortController;
}

/**
 * Where a served agent is in its life. `drained`: an operator drained it and registry-sync
 * removed it; it stays out until its declaration changes (`update`).
 */
export type ServedState = 'starting' | 'serving' | 'drained' | 'fenced' | 'stopping' | 'stopped';

/** XREAD of a control stream: notices read per call. */
const CONTROL_COUNT = 100;

/**
 * One endpoint agent this relay serves, as a registered instance of its own (its epoch, token,
 * inbox and acks stream): it reads the agent's inbox when woken (its wake channel, the sweep),
 * never more entries than free slots, runs each task on the endpoint, and answers probes from the
 * endpoint's own liveness.
 */
export class ServedAgent {
  state: ServedState = 'starting';
  session?: RegisterReply;
  /** The endpoint answered its last check or call. */
  reachable = true;
  /** Capability → the endpoint's own name for it. */
  #remoteNames = new Map<string, string>();
  #acks?: RelayAcks;
  /** What the last registration said (capabilities, schemas, card), to tell a change. */
  #registered = '';
  /** A heartbeat's answer said DRAINING: an operator drained this agent. */
  #drained = false;
  readonly #running = new Map<string, Running>();
  #reading = false;
  #again = false;
  #controlId = '0-0';
  /** No reads before this time (a 429/503 with Retry-After holds the agent's slots). */
  #holdUntil = 0;
  #holdTimer?: NodeJS.Timeout;
  #renewTimer?: NodeJS.Timeout;
  readonly #log: Logger;
  #entry: CatalogEntry;
  #client: EndpointClient;

  constructor(private readonly o: ServedAgentOptions) {
    this.#log = o.logger.child({ agent_id: o.entry.record.agent_id });
    this.#entry = o.entry;
    this.#client = o.client;
  }

  get agentId(): string {
    return this.#entry.record.agent_id;
  }

  get entry(): CatalogEntry {
    return this.#entry;
  }

  get client(): EndpointClient {
    return this.#client;
  }

  get inflight(): number {
    return this.#running.size;
  }

  /** Finds what the endpoint serves and registers this relay's instance of the agent. */
  async start(): Promise<void> {
    await this.#register(await resolveCapabilities(this.#entry, this.#client));
    this.#scheduleRenewals();
    this.wake();
  }

  /**
   * A changed declaration (a PUT, the file): calls from now on use it, running ones finish on the
   * client they started with, and the instance registers again (same instance, same epoch).
   */
  async update(entry: CatalogEntry, client: EndpointClient): Promise<void> {
    const old = this.#client;
    // A drained agent's new declaration brings it back.
    if (this.state === 'drained') this.state = 'starting';
    this.#drained = false;
    this.#entry = entry;
    this.#client = client;
    // Running calls hold the old client; it is closed once the longest of them could be over.
    setTimeout(
      () => void old.close().catch(() => undefined),
      entry.record.timeout_ms + 1000,
    ).unref();
    await this.#register(await resolveCapabilities(entry, client));
    this.wake();
  }

  /**
   * Reads the endpoint's skills or tools again (A2A, MCP): registers again only when they
   * changed, so a fleet of unchanged agents costs registry-sync nothing.
   */
  async rediscover(): Promise<void> {
    if (this.state !== 'serving') return;
    const resolved = await resolveCapabilities(this.#entry, this.#client);
    if (registrationKey(resolved) === this.#registered) return;
    this.#log.info({ capabilities: resolved.capabilities }, 'skills or tools changed');
    await this.#register(resolved);
  }

  async #register(resolved: ResolvedCapabilities): Promise<void> {
    const { registry, relayId, redis } = this.o;
    for (const r of resolved.refused)
      this.#log.warn({ name: r.name, reason: r.reason }, 'discovered name not served');
    if (resolved.capabilities.length === 0)
      throw new Error(`endpoint ${this.agentId} serves no capability this relay can register`);
    const session = await registry.registerEndpoint(this.agentId, {
      instance_id: instanceIdOf(relayId, this.agentId),
      capabilities: resolved.capabilities,
      ...(Object.keys(resolved.inputSchemas).length
        ? { input_schemas: resolved.inputSchemas }
        : {}),
      ...(resolved.card ? { card: resolved.card } : {}),
    });
    this.#remoteNames = resolved.remoteNames;
    this.#registered = registrationKey(resolved);
    this.session = session;
    this.#acks = new RelayAcks(redis, session);
    if (this.state === 'starting') this.state = 'serving';
    this.#log.info(
      { epoch: session.epoch, capabilities: resolved.capabilities },
      'endpoint agent served',
    );
  }

  /** Reads the inbox (and control notices) soon; reads that overlap fold into one more. */
  wake(): void {
    if (this.state !== 'serving') return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#readLoop();
  }

  async #readLoop(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#readOnce();
      } while (this.#again && this.state === 'serving');
    } catch (err) {
      this.#log.warn({ err }, 'inbox read failed; the next wake-up or sweep reads again');
    } finally {
      this.#reading = false;
    }
  }

  async #readOnce(): Promise<void> {
    const session = this.session;
    if (!session || this.state !== 'serving') return;
    const free = this.#entry.record.max_concurrency - this.#running.size;
    const held = Date.now() < this.#holdUntil;
    const pipe = this.o.redis.pipeline();
    if (free > 0 && !held)
      pipe.xreadgroup(
        'GROUP',
        WORKER_GROUP,
        session.instance_id,
        'COUNT',
        free,
        'STREAMS',
        session.stream,
        '>',
      );
    if (session.control_stream)
      pipe.xread('COUNT', CONTROL_COUNT, 'STREAMS', session.control_stream, this.#controlId);
    if (pipe.length === 0) return;
    const replies = (await pipe.exec()) ?? [];
    let i = 0;
    if (free > 0 && !held) {
      const [err, reply] = replies[i++] ?? [];
      if (err) throw err;
      for (const [id, fields] of entriesOf(reply)) this.#take(id, fields);
    }
    if (session.control_stream) {
      const [err, reply] = replies[i] ?? [];
      if (err) throw err;
      for (const [id, fields] of entriesOf(reply)) {
        this.#controlId = id;
        this.#notice(fieldsToRecord(fields));
      }
    }
  }

  /** A control notice: a cancel stops the call of that task and attempt. */
  #notice(n: Record<string, string>): void {
    if (n[ControlField.kind] !== 'cancel') return;
    const running = this.#running.get(n[ControlField.taskId] ?? '');
    if (running && String(running.attempt) === n[ControlField.attempt])
      running.abort.abort('cancelled' satisfies StopReason);
  }

  #take(messageId: string, fields: string[]): void {
    const acks = this.#acks as RelayAcks;
    const decoded = decodeTask(fields);
    if (!decoded.ok) {
      this.#log.warn(
        { message_id: messageId, reason: decoded.error },
        'inbox entry not readable; acknowledged and skipped',
      );
      this.o.metrics.malformed.inc();
      void acks.xack(messageId).catch(() => undefined);
      return;
    }
    const task = decoded.value;
    if (task.capability === PROBE_CAPABILITY) {
      void this.#answerProbe(task, messageId).catch((err: unknown) =>
        this.#log.warn({ err }, 'probe answer failed'),
      );
      return;
    }
    const abort = new AbortController();
    this.#running.set(task.task_id, { attempt: task.attempt, abort });
    void this.#run(task, messageId, abort);
  }

  async #run(task: TaskMessage, messageId: string, abort: AbortController): Promise<void> {
    const { metrics } = this.o;
    const protocol = this.#entry.record.protocol;
    try {
      const { outcome, durationMs } = await runTaskCall({
        task,
        messageId,
        remoteName: this.#remoteNames.get(task.capability) ?? task.capability,
        client: this.#client,
        acks: this.#acks as RelayAcks,
        signal: abort.signal,
      });
      metrics.calls.inc({
        protocol,
        outcome: outcome.kind === 'failed' ? outcome.code : outcome.kind,
      });
      metrics.callSeconds.observe({ protocol }, durationMs / 1000);
      if (isUnreachable(outcome)) this.setReachable(false);
      else if (outcome.kind === 'completed') this.setReachable(true);
      if (outcome.kind === 'failed' && outcome.retryAfterMs) this.#hold(outcome.retryAfterMs);
    } catch (err) {
      this.#log.warn(
        { err, task_id: task.task_id },
        'task report failed; its lease will lapse and it is sent again',
      );
    } finally {
      this.#running.delete(task.task_id);
      this.wake();
    }
  }

  /** A probe is answered from the endpoint's own liveness: passed while it answers. */
  async #answerProbe(task: TaskMessage, messageId: string): Promise<void> {
    const acks = this.#acks as RelayAcks;
    const base = { task_id: task.task_id, attempt: task.attempt, received_ago_ms: 0 };
    await acks.write(
      this.reachable
        ? { ...base, stage: 'completed', result: task.payload, duration_ms: 0 }
        : {
            ...base,
            stage: 'failed',
            error: 'the endpoint does not answer its relay',
            error_code: FailureCode.healthCheckFailed,
            retryable: false,
            duration_ms: 0,
          },
    );
    await acks.xack(messageId);
  }

  /** No reads for `ms` (Retry-After); a read follows when it ends. */
  #hold(ms: number): void {
    this.#holdUntil = Math.max(this.#holdUntil, Date.now() + ms);
    clearTimeout(this.#holdTimer);
    this.#holdTimer = setTimeout(() => this.wake(), Math.max(0, this.#holdUntil - Date.now()));
    this.#holdTimer.unref();
  }

  /** Sets the endpoint's reachability; a change is reported at once. */
  setReachable(reachable: boolean): void {
    if (this.reachable === reachable) return;
    this.reachable = reachable;
    this.#log.info({ reachable }, reachable ? 'endpoint answers again' : 'endpoint unreachable');
    this.o.onReachability(this);
  }

  /** This agent's part of the next batch of heartbeats. */
  beat(): BatchBeat | undefined {
    if (!this.session || (this.state !== 'serving' && this.state !== 'stopping')) return undefined;
    return {
      agent_id: this.agentId,
      token: this.session.token,
      inflight: this.#running.size,
      reachable: this.reachable,
    };
  }

  /**
   * registry-sync's answer to this agent's heartbeat. A newer instance (another relay took the
   * agent) fences this one: it stops at once, reporting nothing more. An operator's drain
   * (DRAINING) lets the running calls finish; once registry-sync removed the record the agent
   * stays out (`drained`) until its declaration changes. Any other record gone is registered
   * again.
   */
  onBeatReply(reply: BatchBeatReply): void {
    if (reply.error === 'STALE_EPOCH') {
      this.#log.info('fenced by a newer instance; stopped serving');
      this.#halt('fenced');
      this.state = 'fenced';
    } else if (reply.status === 'DRAINING' && this.state === 'serving' && !this.#drained) {
      this.#drained = true;
      this.#log.info(
        'an operator drained this agent: no new tasks; it stays out once the registry removes it (declare it again to rejoin)',
      );
    } else if (reply.error === 'AGENT_NOT_FOUND' && this.state === 'serving' && this.#drained) {
      this.#log.info('drained by an operator and removed by the registry: no longer served');
      this.#halt('shutdown');
      this.state = 'drained';
    } else if (reply.error === 'AGENT_NOT_FOUND' && this.state === 'serving') {
      this.#log.info('record gone; registering again');
      this.state = 'starting';
      this.start().catch((err: unknown) => {
        this.#log.warn({ err }, 'registering again failed; the relay retries');
        this.state = 'fenced';
      });
    }
  }

  #scheduleRenewals(): void {
    clearInterval(this.#renewTimer);
    const every = Math.max(1000, Math.floor((this.session?.exec_lease_ms ?? 60_000) / 3));
    this.#renewTimer = setInterval(() => {
      if (this.state !== 'serving' && this.state !== 'stopping') return;
      const ids = [...this.#running.keys()];
      if (ids.length > 0)
        this.#acks
          ?.renew(ids)
          .catch((err: unknown) => this.#log.warn({ err }, 'lease renewal failed'));
    }, every);
    this.#renewTimer.unref();
  }

  #halt(reason: StopReason): void {
    for (const r of this.#running.values()) r.abort.abort(reason);
    clearInterval(this.#renewTimer);
    clearTimeout(this.#holdTimer);
  }

  /**
   * Stops serving. `deregister`: the declaration is gone or the relay shuts down — running calls
   * finish (up to `graceMs`), then the instance deregisters. Otherwise (another relay owns the
   * agent now) running calls are dropped; the new owner's epoch takes the tasks back.
   */
  async stop(opts: { deregister: boolean; graceMs: number }): Promise<void> {
    if (this.state === 'stopped') return;
    const wasServing = this.state === 'serving';
    this.state = 'stopping';
    if (opts.deregister && wasServing) {
      const until = Date.now() + opts.graceMs;
      while (this.#running.size > 0 && Date.now() < until) await sleep(20);
    }
    this.#halt(opts.deregister ? 'shutdown' : 'fenced');
    if (opts.deregister && wasServing && this.session)
      await this.o.registry
        .deregister(this.agentId, this.session.token)
        .catch((err: unknown) => this.#log.warn({ err }, 'deregister failed'));
    this.state = 'stopped';
    await this.#client.close().catch(() => undefined);
  }
}

/** A registration's content as text: equal texts register the same agent. */
function registrationKey(r: ResolvedCapabilities): string {
  return JSON.stringify([r.capabilities, r.inputSchemas, r.card ?? null]);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The entries of an XREAD/XREADGROUP reply of one stream. */
function entriesOf(reply: unknown): [string, string[]][] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const stream = reply[0] as [string, [string, string[]][]];
  return (stream[1] ?? []).filter((e) => Array.isArray(e[1]));
}
