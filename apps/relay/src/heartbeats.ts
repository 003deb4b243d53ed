import type { Logger } from 'pino';
import type { BatchBeat } from '@agent-reach/protocol';
import type { RegistryApi } from './registry-api.ts';
import type { ServedAgent } from './served-agent.ts';

/** Most beats in one request (the route's bound). */
const BATCH = 1000;

/** What the heartbeats need. */
export interface HeartbeatsOptions {
  registry: RegistryApi;
  logger: Logger;
  /** The agents served now. */
  agents(): Iterable<ServedAgent>;
}

/**
 * Heartbeats of every served agent, in batches (`POST /v1/agents/heartbeats`): each carries the
 * agent's own token, its inflight count and whether its endpoint answers — a `false` makes it
 * SUSPECT at once, registry-sync staying the writer of its status.
 */
export class Heartbeats {
  #sending: Promise<void> | undefined;
  #again = false;

  constructor(private readonly o: HeartbeatsOptions) {}

  /** Sends one round now; a round asked for while one is in flight follows it. */
  beat(): Promise<void> {
    if (this.#sending) {
      this.#again = true;
      return this.#sending;
    }
    this.#sending = this.#round().finally(() => {
      this.#sending = undefined;
      if (this.#again) {
        this.#again = false;
        void this.beat();
      }
    });
    return this.#sending;
  }

  async #round(): Promise<void> {
    const pairs: [ServedAgent, BatchBeat][] = [];
    for (const a of this.o.agents()) {
      const b = a.beat();
      if (b) pairs.push([a, b]);
    }
    for (let i = 0; i < pairs.length; i += BATCH) {
      const chunk = pairs.slice(i, i + BATCH);
      try {
        const { acks } = await this.o.registry.heartbeats(chunk.map(([, b]) => b));
        acks.forEach((reply, j) => chunk[j]?.[0].onBeatReply(reply));
      } catch (err) {
        this.o.logger.warn({ err, agents: chunk.length }, 'heartbeats failed; next round retries');
      }
    }
  }
}
