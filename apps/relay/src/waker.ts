import { isCluster, type RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Logger } from 'pino';

/** What the waker needs. */
export interface WakerOptions {
  /** The command connection: the subscriber is made beside it with the same settings. */
  redis: RedisClient;
  keys: ReachKeys;
  logger: Logger;
  /** Called with the agent whose wake channel got a message. */
  onWake(agentId: string): void;
  /** Called after the subscriber (re)connected: wake-ups may have been missed. */
  onResubscribed(): void;
  /** The subscriber's connection errors. */
  onError(err: Error): void;
}

/**
 * Sharded pub/sub wake-ups (docs/ENDPOINTS.md, Waking up): deliver-3.lua `SPUBLISH`es an endpoint
 * agent's wake channel with every delivery, the canceller with every cancel notice. One
 * SSUBSCRIBE per agent; on a Cluster, ioredis keeps one subscriber connection per master
 * (`shardedSubscribers`) and moves channels with their slots.
 */
export class Waker {
  readonly #sub: RedisClient;
  readonly #byChannel = new Map<string, string>();

  constructor(private readonly o: WakerOptions) {
    // A subscriber sends its SSUBSCRIBEs as they come, never auto-pipelined.
    this.#sub = isCluster(o.redis)
      ? o.redis.duplicate(undefined, { shardedSubscribers: true, enableAutoPipelining: false })
      : o.redis.duplicate({ connectionName: 'reach-relay-wake', enableAutoPipelining: false });
    this.#sub.on('smessage', (channel: string) => {
      const agentId = this.#byChannel.get(channel);
      if (agentId !== undefined) o.onWake(agentId);
    });
    this.#sub.on('ready', () => o.onResubscribed());
    this.#sub.on('error', (err: Error) => o.onError(err));
  }

  /** The subscriber's connection (a Cluster client with one per master). */
  get client(): RedisClient {
    return this.#sub;
  }

  /** Listens for `agentId`'s wake-ups. */
  async add(agentId: string): Promise<void> {
    const channel = this.o.keys.wake(agentId);
    if (this.#byChannel.has(channel)) return;
    this.#byChannel.set(channel, agentId);
    try {
      await this.#sub.ssubscribe(channel);
    } catch (err) {
      this.#byChannel.delete(channel);
      throw err;
    }
  }

  /** Stops listening for `agentId`. */
  async remove(agentId: string): Promise<void> {
    const channel = this.o.keys.wake(agentId);
    if (!this.#byChannel.delete(channel)) return;
    await this.#sub.sunsubscribe(channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#byChannel.clear();
    this.#sub.disconnect();
  }
}
