import type { Redis } from 'ioredis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Decision, SnapshotHolder } from '@agent-reach/dispatch';
import { isPush } from './decision.ts';

/** How many of the agents counted full one recount reads at most, the least loaded first. */
const RECOUNT_LIMIT = 8;

/**
 * Reads the true inflight counts (pending hashes' lengths) of the push agents a decision excluded
 * as full, and records them in the snapshot holder. The router sees no completions: between
 * snapshots, a count it learned from its own deliveries stays as high as it was for up to 250 ms,
 * so a burst that reserves many slots at once can count every agent full while tasks have
 * finished meanwhile. One recount per capability is in flight at a time, and the submissions
 * that find every agent full meanwhile share it: a burst of refusals under real overload costs
 * one round trip, not one per refused submission. A recount is not trusted beyond its reply —
 * slots free all the time, and the next refusal reads again.
 */
export class FullRecounter {
  readonly #inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    /** Told what each recount found (the router counts them in its metrics). */
    private readonly onRecount: (room: boolean) => void = () => undefined,
  ) {}

  /** True when an agent the decision counted full has room after all. */
  recount(capability: string, decision: Decision): Promise<boolean> {
    let pending = this.#inFlight.get(capability);
    if (!pending) {
      pending = this.#read(decision)
        .then((room) => {
          this.onRecount(room);
          return room;
        })
        .finally(() => this.#inFlight.delete(capability));
      this.#inFlight.set(capability, pending);
    }
    return pending;
  }

  async #read(decision: Decision): Promise<boolean> {
    const full = decision.all
      .filter((c) => c.excluded === 'full' && isPush(c.agent))
      .sort((a, b) => a.load - b.load)
      .slice(0, RECOUNT_LIMIT);
    if (full.length === 0) return false;
    let counts: number[];
    try {
      counts = await Promise.all(full.map((c) => this.redis.hlen(this.keys.pending(c.agent.agent_id))));
    } catch {
      // Redis is unreachable: the router's own counts stand (429, and the caller retries).
      return false;
    }
    let room = false;
    full.forEach((c, i) => {
      this.snapshot.noteInflight(c.agent.agent_id, counts[i] as number);
      if (this.snapshot.inflightOf(c.agent) < c.agent.max_concurrency) room = true;
    });
    return room;
  }
}
