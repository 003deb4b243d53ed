import type { Redis } from 'ioredis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Decision, SnapshotHolder } from '@agent-reach/dispatch';
import { isPush } from './decision.ts';

/** How many of the agents counted full one recount reads at most, the least loaded first. */
const RECOUNT_LIMIT = 8;
/** How long a recount that found every agent full answers for its capability. */
const FULL_TRUST_MS = 20;

interface Recount {
  at: number;
  pending?: Promise<boolean>;
}

/**
 * Reads the true inflight counts (pending hashes' lengths) of the push agents a decision excluded
 * as full, and records them in the snapshot holder. The router sees no completions: between
 * snapshots, a count it learned from its own deliveries stays as high as it was for up to 250 ms,
 * so a burst that reserves many slots at once can count every agent full while tasks have
 * finished meanwhile. One recount per capability is in flight at a time, and one that found
 * every agent full answers for the next 20 ms: a burst of refusals under real overload costs one
 * round trip, not one per refused submission.
 */
export class FullRecounter {
  readonly #last = new Map<string, Recount>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    /** Told what each recount found (the router counts them in its metrics). */
    private readonly onRecount: (room: boolean) => void = () => undefined,
  ) {}

  /** True when an agent the decision counted full has room after all. */
  recount(capability: string, decision: Decision): Promise<boolean> {
    const last = this.#last.get(capability);
    if (last?.pending) return last.pending;
    if (last && Date.now() - last.at < FULL_TRUST_MS) return Promise.resolve(false);
    const state: Recount = { at: 0 };
    state.pending = this.#read(decision).then(
      (room) => {
        this.onRecount(room);
        if (room) this.#last.delete(capability);
        else this.#last.set(capability, { at: Date.now() });
        return room;
      },
      (err: unknown) => {
        this.#last.delete(capability);
        throw err;
      },
    );
    this.#last.set(capability, state);
    return state.pending;
  }

  async #read(decision: Decision): Promise<boolean> {
    const full = decision.all
      .filter((c) => c.excluded === 'full' && isPush(c.agent))
      .sort((a, b) => a.load - b.load)
      .slice(0, RECOUNT_LIMIT);
    if (full.length === 0) return false;
    const counts = await Promise.all(full.map((c) => this.redis.hlen(this.keys.pending(c.agent.agent_id))));
    let room = false;
    full.forEach((c, i) => {
      this.snapshot.noteInflight(c.agent.agent_id, counts[i] as number);
      if (this.snapshot.inflightOf(c.agent) < c.agent.max_concurrency) room = true;
    });
    return room;
  }
}
