import type {
  AgentAck,
  AgentRuntime,
  ErrorCode,
  HeartbeatBody,
  RedisCredentials,
  RegisterReply,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { isReachHttpError } from '../errors.ts';
import type { RegistryClient } from './registry-client.ts';

/** Real interval past this share of the configured one gets a warning (Hatchet does the same). */
export const DRIFT_WARN_RATIO = 1.2;

const GONE: ErrorCode = 'AGENT_NOT_FOUND';
const FENCED: ErrorCode = 'STALE_EPOCH';

/** What the heartbeat needs from the agent. */
export interface HeartbeatContext {
  registry: RegistryClient;
  session(): RegisterReply | undefined;
  /** Tasks held now. */
  inflight(): number;
  maxConcurrency: number;
  /** True when heartbeats must carry `ready: true` (a two-phase start that is done). */
  reportReady(): boolean;
  /** True while the agent said it is not ready (`markNotReady()`): heartbeats carry `ready: false`. */
  notReady?(): boolean;
  /** The process's runtime figures since the last heartbeat, sent with each. */
  runtime?(): AgentRuntime;
  /** The registry answered a heartbeat (2xx); `body` is what it was told, `ack` its answer. */
  onAnswered(body: HeartbeatBody, ack: AgentAck): void;
  /**
   * The answer carried new Redis credentials (the registry made this instance's user again), and
   * the instance's ack key when the registration had none.
   */
  onCredentials?(credentials: RedisCredentials, ackKey: string | undefined): void;
  logger: Logger;
  /** The registry lost our record (404 AGENT_NOT_FOUND): register again. */
  onGone(): void;
  /** A newer instance took over (409 STALE_EPOCH). */
  onFenced(err: unknown): void;
}

/**
 * Heartbeats on its own timer every `heartbeat_interval_ms` of the registration, with the
 * inflight count (and `ready: true` once a two-phase start is done). Ticks are scheduled on a fixed cadence and never overlap; when the event loop
 * was too busy to tick on time (a CPU-bound handler), it warns, since the lease is at risk.
 */
export class Heartbeat {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #lastTickAt: number | undefined;
  #consecutiveFailures = 0;
  /** Bumped by stop(), so an answer to a heartbeat sent before it triggers nothing. */
  #generation = 0;

  constructor(private readonly ctx: HeartbeatContext) {}

  /** Starts ticking; the first heartbeat goes out after one interval (registering counted as one). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#lastTickAt = performance.now();
    this.#schedule(this.#intervalMs());
  }

  /** Stops ticking; a heartbeat already sent finishes but triggers nothing. */
  stop(): void {
    this.#running = false;
    this.#generation += 1;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Sends one heartbeat now, off the timer's cadence (a readiness report, say), and handles its
   * answer. Never rejects.
   */
  async beat(): Promise<void> {
    const session = this.ctx.session();
    if (session === undefined) return;
    const generation = this.#generation;
    const inflight = this.ctx.inflight();
    const body: HeartbeatBody = {
      inflight,
      status: inflight >= this.ctx.maxConcurrency ? 'busy' : 'idle',
      ...(this.ctx.runtime ? { runtime: this.ctx.runtime() } : {}),
    };
    // Every beat once ready, not only the first: a re-registration racing markReady() may have
    // told the registry `ready: false`, and the next beat puts that right.
    if (this.ctx.notReady?.() === true) body.ready = false;
    else if (this.ctx.reportReady()) body.ready = true;
    try {
      const ack = await this.ctx.registry.heartbeat(session, body);
      if (ack.redis !== undefined) this.ctx.onCredentials?.(ack.redis, ack.ack_key);
      if (this.#consecutiveFailures > 0)
        this.ctx.logger.info({ failures: this.#consecutiveFailures }, 'heartbeat recovered');
      this.#consecutiveFailures = 0;
      this.ctx.onAnswered(body, ack);
    } catch (err: unknown) {
      if (generation !== this.#generation) return;
      this.#consecutiveFailures += 1;
      if (isReachHttpError(err) && err.code === FENCED) {
        this.stop();
        this.ctx.onFenced(err);
      } else if (isReachHttpError(err) && err.code === GONE) {
        this.stop();
        this.ctx.logger.warn('registry has no record of this agent; registering again');
        this.ctx.onGone();
      } else if (isReachHttpError(err) && err.status === 401) {
        // Not a takeover (that is 409): re-registering could steal the agent back, so only shout.
        this.ctx.logger.error(
          { err, failures: this.#consecutiveFailures },
          'heartbeat token refused',
        );
      } else {
        this.ctx.logger.warn(
          { err, failures: this.#consecutiveFailures },
          'heartbeat failed; will keep trying',
        );
      }
    }
  }

  #intervalMs(): number {
    return Math.max(1, this.ctx.session()?.heartbeat_interval_ms ?? 5000);
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, delayMs));
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const intervalMs = this.#intervalMs();
    const startedAt = performance.now();
    if (this.#lastTickAt !== undefined) {
      const actualMs = startedAt - this.#lastTickAt;
      if (actualMs > intervalMs * DRIFT_WARN_RATIO) {
        this.ctx.logger.warn(
          { intervalMs, actualMs: Math.round(actualMs) },
          'heartbeat late: the event loop was blocked or a request hung',
        );
      }
    }
    this.#lastTickAt = startedAt;
    await this.beat();
    this.#schedule(intervalMs - (performance.now() - startedAt));
  }
}
