import { EventEmitter } from 'node:events';
import type { ErrorCode, RegisterReply } from '@agent-reach/protocol';
import { connectRedis, type RedisClient } from '@agent-reach/service-kit/redis';
import { flushTracing, otlpConfigured, startTracing } from '@agent-reach/service-kit/tracing';
import type { Logger } from 'pino';
import { AgentFencedError, isReachHttpError, ReachClosedError } from '../errors.ts';
import { Deferred } from '../util/deferred.ts';
import { settlesWithin } from '../util/sleep.ts';
import { AckWriter } from './acks.ts';
import { useCredentials } from './credentials.ts';
import { Consumer, type ReadSource } from './consumer.ts';
import { Heartbeat } from './heartbeat.ts';
import { RuntimeFigures } from './runtime-figures.ts';
import {
  compileAgentOptions,
  type CompiledAgentOptions,
  type ReachAgentOptions,
} from './options.ts';
import { EntryParker } from './parking.ts';
import { closeRedis, openRedis } from './redis-util.ts';
import { registerWithRetry } from './registration.ts';
import { RegistryClient } from './registry-client.ts';
import { ControlReader } from './control.ts';
import { LeaseRenewals } from './renewals.ts';
import { TaskRunner } from './runner.ts';
import { Slots } from './slots.ts';
import { RouterSubmitter } from './submitter.ts';

/**
 * Lifecycle of a {@link ReachAgent}: `starting` until registered and ready (for a two-phase
 * start, `ready: false`, until {@link ReachAgent.markReady} too), `running` while it reads
 * tasks, `draining` while `close()` waits for in-flight tasks, `closed` at the end;
 * `fenced` when a newer instance of the same agent took over (reading and heartbeats stop;
 * `close()` still ends in `closed`).
 */
export type AgentState = 'starting' | 'running' | 'draining' | 'closed' | 'fenced';

/** Events a {@link ReachAgent} emits. */
export interface ReachAgentEvents {
  /** Registered (also after a re-registration); carries the registry's reply. */
  registered: [reply: RegisterReply];
  /** The state changed. */
  state: [state: AgentState];
  /** A newer instance took over; this one no longer reads. */
  fenced: [error: AgentFencedError];
  /**
   * An operator drained this agent (`POST /v1/agents/:id/drain`): it gets no new tasks, runs the
   * ones it holds, and closes once the registry removed it, instead of registering again.
   */
  drained: [];
}

/** Grace after aborting handlers at the shutdown timeout, for their failure acks to go out. */
const ABORT_GRACE_MS = 2000;
const STALE: ErrorCode = 'STALE_EPOCH';
const NO_POOLS: readonly string[] = [];

interface Wiring {
  cmd: RedisClient;
  read: RedisClient;
  runner: TaskRunner;
  consumer: Consumer;
  heartbeat: Heartbeat;
  /** The event loop, GC and memory figures each heartbeat carries. */
  runtime: RuntimeFigures;
  renewals: LeaseRenewals;
  control: ControlReader;
  /** The control reader's own connection (its XREAD blocks). */
  ctl: RedisClient;
  /** Sends child tasks and reads their results (its long poll stops at shutdown). */
  children: RouterSubmitter;
}

/**
 * An agent: registers with registry-sync in the background, heartbeats, reads at most as many
 * tasks as it has free slots from its inbox (and, with `channel: 'pull'`, from the pools of its
 * capabilities), runs the handler and reports every stage on the acks stream. `start()` returns at once; `ready()` tells when registered; `close()` drains.
 */
export class ReachAgent extends EventEmitter<ReachAgentEvents> {
  /** The settings in effect. */
  readonly options: CompiledAgentOptions;
  /** Bound to this agent; each collaborator logs through a child with its `module`. */
  readonly #base: Logger;
  readonly #log: Logger;
  readonly #registry: RegistryClient;
  readonly #slots: Slots;
  readonly #ready = new Deferred<RegisterReply>();
  /** Resolves true once the registry knows the agent is ready; false when closed or fenced first. */
  readonly #readyTold = new Deferred<boolean>();
  /** Aborted when closing or fenced: stops registration attempts. */
  readonly #lifetime = new AbortController();
  /** Aborted when a shutdown gives up: ack writes stop retrying. */
  readonly #hardStop = new AbortController();
  #state: AgentState = 'starting';
  /** Ready to take tasks: from the start, or since markReady() for a two-phase start. */
  #isReady: boolean;
  /** markNotReady() said so: no new tasks until markReady(). */
  #notReady = false;
  /** markNotReady() was ever called: heartbeats carry `ready: true` again after it. */
  #wasNotReady = false;
  #fenced = false;
  /** A heartbeat's answer said DRAINING while this agent was not closing: an operator drained it. */
  #drained = false;
  #session: RegisterReply | undefined;
  #wiring: Wiring | undefined;
  #reregistering: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #lastSource: ReadSource | undefined;

  /** Checks the options (throws on a bad one); connects nothing until {@link start}. */
  constructor(options: ReachAgentOptions) {
    super();
    this.options = compileAgentOptions(options);
    this.#base = this.options.logger.child({
      agent_id: this.options.agentId,
      instance_id: this.options.instanceId,
    });
    this.#log = this.#base.child({ module: 'agent' });
    this.#registry = new RegistryClient(
      this.options.registryUrl,
      this.options.requestTimeoutMs,
      this.options.apiKey,
    );
    this.#slots = new Slots(this.options.maxConcurrency);
    this.#isReady = this.options.ready;
  }

  /** Current lifecycle state. */
  get state(): AgentState {
    return this.#state;
  }

  /** The current registration (stream, group, epoch, …), once registered. */
  get registration(): Readonly<RegisterReply> | undefined {
    return this.#session;
  }

  /** Tasks held now: read and not yet fully reported. */
  get inflight(): number {
    return this.#slots.inUse;
  }

  /**
   * Connects to Redis and starts registering in the background; returns at once. Tasks are read
   * once registered. Calling it again does nothing; after `close()` it throws {@link ReachClosedError}.
   */
  start(): this {
    if (this.#closing !== undefined) throw new ReachClosedError('agent');
    if (this.#wiring !== undefined) return this;
    const o = this.options;
    const child = (module: string): Logger => this.#base.child({ module });
    const cmd = openRedis(o, 'cmd', child('redis'));
    const read = openRedis(o, 'read', child('redis'));
    const ctl = openRedis(o, 'control', child('redis'));
    const session = (): RegisterReply | undefined => this.#session;
    const acks = new AckWriter({
      redis: cmd,
      session,
      retry: o.redisRetry,
      logger: child('acks'),
      stop: this.#hardStop.signal,
    });
    // Child tasks go to the router with the agent's key (role agent may submit).
    const children = new RouterSubmitter(
      { routerUrl: o.routerUrl, timeoutMs: o.requestTimeoutMs, apiKey: o.apiKey },
      child('children'),
    );
    const runner = new TaskRunner({
      handler: o.handler,
      acks,
      submitter: children,
      completedCacheSize: o.completedCacheSize,
      placement: { region: o.region, tags: o.tags, capabilities: o.capabilities },
      parker: new EntryParker({
        redis: cmd,
        session,
        agentId: o.agentId,
        logger: child('parking'),
      }),
      logger: child('runner'),
      health: o.health,
      healthTimeoutMs: o.healthTimeoutMs,
    });
    const consumer = new Consumer({
      blocking: read,
      control: cmd,
      source: () => this.#source(),
      runner,
      slots: this.#slots,
      blockMs: o.blockMs,
      retry: o.redisRetry,
      logger: child('consumer'),
      onGroupMissing: () => this.#reregister(),
    });
    const runtime = new RuntimeFigures();
    const heartbeat = new Heartbeat({
      registry: this.#registry,
      runtime: () => runtime.take(),
      session,
      inflight: () => this.#slots.inUse,
      maxConcurrency: o.maxConcurrency,
      // Only after a two-phase start: a registration without `ready: false` already said so.
      reportReady: () => this.#isReady && (!o.ready || this.#wasNotReady),
      notReady: () => this.#notReady,
      onAnswered: (body, ack) => {
        if (body.ready === true) this.#readyTold.resolve(true);
        if (ack.status === 'DRAINING') this.#onDrained();
      },
      onCredentials: (credentials, ackKey) => {
        this.#log.info('redis credentials issued again; used from the next connect');
        for (const conn of [cmd, read, ctl, ...consumer.connections()])
          useCredentials(conn, credentials);
        // Registered before signed acks were required: sign from now on.
        const current = this.#session;
        if (current !== undefined && ackKey !== undefined && current.ack_key !== ackKey)
          this.#session = { ...current, redis: credentials, ack_key: ackKey };
      },
      logger: child('heartbeat'),
      onGone: () => this.#reregister(),
      onFenced: (err) => this.#fence(err),
    });
    const renewals = new LeaseRenewals({
      session,
      running: () => runner.runningTaskIds(),
      renew: (ids) => acks.renew(ids),
      logger: child('renewals'),
    });
    const control = new ControlReader({
      redis: ctl,
      session,
      onCancel: (taskId) => runner.cancel(taskId),
      blockMs: o.blockMs,
      logger: child('control'),
    });
    this.#wiring = {
      cmd,
      read,
      runner,
      consumer,
      heartbeat,
      runtime,
      renewals,
      control,
      ctl,
      children,
    };
    this.#reregistering = this.#register();
    return this;
  }

  /**
   * Resolves with the registration once registered. Rejects if the registry refuses it for good
   * (a {@link ReachHttpError}), if the agent is fenced ({@link AgentFencedError}) or closed
   * ({@link ReachClosedError}) first.
   */
  ready(): Promise<RegisterReply> {
    return this.#ready.promise;
  }

  /**
   * Ends a two-phase start (`ready: false`): the agent starts reading its stream and tells the
   * registry at once with a heartbeat carrying `ready: true` (every later heartbeat carries it
   * too, and a re-registration keeps it). Before registration it only marks the agent, which
   * then registers as ready. Resolves true once the registry has been told, false if the agent
   * is closed or fenced first; never rejects. Calling it again, or on an agent that was ready
   * from the start, returns the same answer.
   */
  markReady(): Promise<boolean> {
    if (this.#notReady && this.#closing === undefined && !this.#fenced) {
      // Back from markNotReady(): the registry routes tasks to the agent again.
      this.#notReady = false;
      this.#log.info('ready again: taking new tasks');
      void this.#wiring?.heartbeat.beat();
    }
    if (!this.#isReady && this.#closing === undefined && !this.#fenced) {
      this.#isReady = true;
      this.#log.info('ready: taking tasks');
      // During a registration, #register() finishes the job once it has a reply.
      if (this.#session !== undefined && this.#reregistering === undefined) {
        this.#startReading();
        void this.#wiring?.heartbeat.beat();
      }
    }
    return this.#readyTold.promise;
  }

  /**
   * Stops new tasks without stopping the running ones (a model reloading, a dependency down): a
   * heartbeat carrying `ready: false` goes out at once (and every heartbeat carries it until
   * {@link markReady}), so the registry routes no new task to the agent (status `STARTING`) and
   * probes stop; a pull agent stops reading its pools. Tasks already in its inbox are still run.
   * Resolves once that heartbeat was answered or failed; never rejects.
   */
  async markNotReady(): Promise<void> {
    if (this.#closing !== undefined || this.#fenced) return;
    if (!this.#notReady) this.#log.info('not ready: no new tasks until markReady()');
    this.#notReady = true;
    this.#wasNotReady = true;
    await this.#wiring?.heartbeat.beat();
  }

  /**
   * Stops reading, waits up to `shutdownTimeoutMs` for in-flight tasks (then aborts their
   * signals), deregisters and closes the connections. Idempotent: every call gets the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  #source(): ReadSource | undefined {
    const s = this.#session;
    if (s === undefined) return undefined;
    // Pools are the pull channel's; a push agent reads its inbox only, whatever the reply lists.
    const pools = this.options.channel === 'pull' && !this.#notReady ? s.pools : NO_POOLS;
    // The same object while nothing changed: the read loop keeps what it derives from it.
    const last = this.#lastSource;
    if (
      last !== undefined &&
      last.group === s.group &&
      last.consumer === s.instance_id &&
      last.inbox === s.stream &&
      last.pools === pools
    )
      return last;
    this.#lastSource = { group: s.group, consumer: s.instance_id, inbox: s.stream, pools };
    return this.#lastSource;
  }

  #setState(state: AgentState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#log.info({ state }, 'agent state');
    this.#emitSafe('state', state);
  }

  #emitSafe<K extends keyof ReachAgentEvents>(event: K, ...args: ReachAgentEvents[K]): void {
    try {
      (this.emit as (e: K, ...a: ReachAgentEvents[K]) => boolean)(event, ...args);
    } catch (err: unknown) {
      this.#log.error({ err, event }, 'an event listener threw');
    }
  }

  #startReading(): void {
    this.#wiring?.consumer.start();
    if (this.#state === 'starting') this.#setState('running');
  }

  async #register(): Promise<void> {
    try {
      const log = this.#base.child({ module: 'registration' });
      // With an OTLP endpoint set, the SDK is loaded (once per process) before a task is read.
      if (otlpConfigured()) await startTracing({ serviceName: 'agent-reach-agent', logger: log });
      const done = await registerWithRetry(
        this.options,
        this.#registry,
        log,
        this.#lifetime.signal,
        // After markNotReady(), a registration (again, after a 404) says `ready: false` too.
        () => this.#isReady && !this.#notReady,
      );
      if (done === undefined || this.#closing !== undefined || this.#fenced) return;
      const { reply } = done;
      // A confined agent (REACH_AGENT_ACL=on) reads and reports as its own Redis user.
      if (reply.redis !== undefined && this.#wiring !== undefined)
        for (const conn of [this.#wiring.cmd, this.#wiring.read, this.#wiring.ctl])
          useCredentials(conn, reply.redis);
      // The first registration: Redis must answer within 10 s, or the start fails naming it.
      const cmd = this.#wiring?.cmd;
      if (cmd?.status === 'wait')
        await connectRedis(cmd, { ...this.options.redisConnection, url: this.options.redisUrl });
      this.#session = reply;
      this.#wiring?.heartbeat.start();
      this.#wiring?.renewals.start();
      this.#wiring?.control.start();
      if (done.ready) this.#readyTold.resolve(true);
      if (this.#isReady) {
        this.#startReading();
        // markReady() came while this registration said `ready: false`: tell the registry now.
        if (!done.ready) void this.#wiring?.heartbeat.beat();
      }
      this.#ready.resolve(reply);
      this.#emitSafe('registered', reply);
    } catch (err: unknown) {
      if (isReachHttpError(err) && err.code === STALE) return this.#fence(err);
      this.#ready.reject(err);
      void this.close();
    } finally {
      this.#reregistering = undefined;
    }
  }

  /** An operator drained this agent: it stays out once its tasks are done (see `drained`). */
  #onDrained(): void {
    if (this.#drained || this.#closing !== undefined || this.#fenced) return;
    this.#drained = true;
    this.#log.warn(
      'an operator drained this agent: no new tasks; it closes once the registry removes it (start it again to rejoin)',
    );
    this.#emitSafe('drained');
  }

  /**
   * The record or the stream's group is gone: register again, same instance_id, work goes on;
   * after an operator's drain, close instead.
   */
  #reregister(): void {
    if (this.#reregistering !== undefined || this.#closing !== undefined || this.#fenced) return;
    if (this.#drained) {
      this.#log.warn('drained by an operator and removed by the registry: closing');
      void this.close();
      return;
    }
    this.#wiring?.heartbeat.stop();
    this.#reregistering = this.#register();
  }

  #fence(cause: unknown): void {
    if (this.#fenced || this.#state === 'closed') return;
    this.#fenced = true;
    const error = new AgentFencedError(this.options.agentId, this.#session?.epoch ?? 0, cause);
    this.#log.error(
      { err: error },
      'fenced: a newer instance of this agent took over; reading and heartbeats stopped',
    );
    this.#lifetime.abort();
    this.#wiring?.heartbeat.stop();
    this.#wiring?.runtime.stop();
    // A fenced instance's renewals are refused anyway (stale epoch).
    this.#wiring?.renewals.stop();
    // In-flight handlers finish; their acks still carry this instance's (old) epoch.
    void this.#wiring?.consumer.stop();
    this.#setState('fenced');
    this.#ready.reject(error);
    this.#readyTold.resolve(false);
    this.#emitSafe('fenced', error);
  }

  async #shutdown(): Promise<void> {
    const w = this.#wiring;
    if (!this.#fenced) this.#setState('draining');
    this.#lifetime.abort();
    if (w !== undefined) {
      await w.consumer.stop();
      const { shutdownTimeoutMs } = this.options;
      if (this.#slots.inUse > 0)
        this.#log.info({ inflight: this.#slots.inUse }, 'draining in-flight tasks');
      if (!(await settlesWithin(this.#slots.whenIdle(), shutdownTimeoutMs))) {
        this.#log.warn(
          { inflight: this.#slots.inUse, shutdownTimeoutMs },
          'shutdown timeout; aborting in-flight handlers',
        );
        w.runner.abortAll();
        if (!(await settlesWithin(this.#slots.whenIdle(), ABORT_GRACE_MS))) {
          this.#log.warn(
            { inflight: this.#slots.inUse },
            'handlers ignored the abort; the server will reclaim their tasks',
          );
        }
      }
      this.#hardStop.abort();
      // No handler waits for a child any more: a long poll still open must not hold the process.
      await w.children.close();
      w.heartbeat.stop();
      w.runtime.stop();
      w.renewals.stop();
      await w.control.stop();
      await this.#reregistering;
      // Connections first: every ack is written by now, and a deregistration removes the
      // instance's Redis user (REACH_AGENT_ACL=on), which would cut them off mid-goodbye.
      await Promise.all([closeRedis(w.cmd), closeRedis(w.read)]);
      await this.#deregister();
    }
    // The spans of the tasks it ran leave now; other agents of the process may still trace.
    await flushTracing();
    this.#setState('closed');
    this.#ready.reject(new ReachClosedError('agent'));
    this.#readyTold.resolve(false);
  }

  async #deregister(): Promise<void> {
    const session = this.#session;
    // A fenced instance's token is stale: the registry would refuse it, and the record is the new
    // instance's. A drained one is draining or gone already.
    if (session === undefined || this.#fenced || this.#drained) return;
    try {
      await this.#registry.deregister(session);
      this.#log.info('deregistered');
    } catch (err: unknown) {
      this.#log.warn({ err }, 'deregister failed; the registry will let the lease run out');
    }
  }
}
