import type { StreamEntry } from './redis-util.ts';

/** One XREADGROUP call: `ids[i]` is the id read after in `streams[i]`. */
export interface ReadCall {
  streams: readonly string[];
  ids: readonly string[];
  /** COUNT. Redis applies it to each stream of the call, not to the call as a whole. */
  count: number;
  /** BLOCK for the configured time, or answer at once. */
  block: boolean;
  /** Re-reading this consumer's own pending entries (an id, not `>`). */
  history: boolean;
}

/** Where the read loop is: which streams still have history to re-read, and the sweep in progress. */
export interface ReadPlanState {
  /** Streams still re-reading their history, with the last id read. */
  history: ReadonlyMap<string, string>;
  /** Streams left in the current sweep. */
  sweep: readonly string[] | undefined;
}

/**
 * Plans the read loop's XREADGROUP calls over the agent's streams (its inbox, and for a pull
 * agent its capability pools) so that no call can return more entries than there are free slots.
 * COUNT bounds each stream of a call, so k streams with COUNT c may return k×c entries:
 *
 * 1. **History first**: each stream's own pending entries (id `0`, then the last id read), one
 *    stream per call, COUNT free, no BLOCK — after a restart with the same instance_id the agent
 *    finishes what it had read and never acknowledged.
 * 2. **free ≥ k**: every stream in one blocking call, COUNT ⌊free / k⌋.
 * 3. **free < k**: a sweep, one stream per call without BLOCK, COUNT free, starting one stream
 *    further each sweep so that no stream is always served first (within a rank: a pool's higher
 *    priority bands are read before its lower ones); only if the whole sweep found
 *    nothing, one blocking call over `free` of the streams with COUNT 1: those that gave entries
 *    most recently (where the next is most likely to land: a shallow pool's usual band), then in
 *    turn. An entry that lands on a stream outside that call waits at most one BLOCK, until the
 *    next sweep.
 *
 * Reading one stream per call everywhere would only mean splitting case 2 like case 3.
 */
export class ReadPlanner {
  readonly #history = new Map<string, string>();
  readonly #known = new Set<string>();
  #sweep: string[] | undefined;
  #sweepFound = false;
  #rotation = 0;
  /** Stream → the number of the read that last returned entries from it. */
  readonly #found = new Map<string, number>();
  #reads = 0;

  /**
   * The next call for these streams with `free` (≥ 1) free slots. `rank`: a sweep reads streams
   * of a higher rank first (a pool's higher priority bands, pool-bands.ts), rotating only among
   * streams of the same rank.
   */
  next(streams: readonly string[], free: number, rank?: (stream: string) => number): ReadCall {
    if (free < 1) throw new RangeError(`next() with ${free} free slots`);
    this.#follow(streams);
    const history = streams.find((s) => this.#history.has(s));
    if (history !== undefined) {
      return {
        streams: [history],
        ids: [this.#history.get(history) ?? '0'],
        count: free,
        block: false,
        history: true,
      };
    }
    const k = streams.length;
    if (free >= k) {
      this.#sweep = undefined;
      return {
        streams,
        ids: streams.map(() => '>'),
        count: Math.floor(free / k),
        block: true,
        history: false,
      };
    }
    if (this.#sweep === undefined) {
      const turn = rotate(streams, this.#rotation++);
      // Array.prototype.sort is stable: equal ranks keep their turn.
      this.#sweep = rank ? turn.sort((a, b) => rank(b) - rank(a)) : turn;
      this.#sweepFound = false;
    }
    const stream = this.#sweep.shift();
    if (stream !== undefined)
      return { streams: [stream], ids: ['>'], count: free, block: false, history: false };
    this.#sweep = undefined;
    if (this.#sweepFound) return this.next(streams, free, rank);
    const found = (s: string) => this.#found.get(s) ?? 0;
    // Array.prototype.sort is stable: streams that never gave entries keep their turn.
    const some = rotate(streams, this.#rotation)
      .sort((a, b) => found(b) - found(a))
      .slice(0, free);
    return { streams: some, ids: some.map(() => '>'), count: 1, block: true, history: false };
  }

  /** Records what a call returned: moves history cursors on, and notes a sweep that found work. */
  done(call: ReadCall, entries: readonly StreamEntry[]): { resumed: number } {
    if (entries.length > 0) {
      this.#reads++;
      for (const e of entries) this.#found.set(e.stream, this.#reads);
    }
    if (!call.history) {
      if (entries.length > 0) this.#sweepFound = true;
      return { resumed: 0 };
    }
    const stream = call.streams[0] ?? '';
    const last = entries.at(-1);
    if (last === undefined) this.#history.delete(stream);
    else this.#history.set(stream, last.id);
    return { resumed: entries.length };
  }

  /** For tests and logs. */
  get state(): ReadPlanState {
    return { history: this.#history, sweep: this.#sweep };
  }

  /**
   * A stream seen for the first time starts with its history; one no longer read is forgotten.
   * A NOGROUP does not restart histories: other streams may hold entries this instance is still
   * running, and reading them again would take a second slot for each.
   */
  #follow(streams: readonly string[]): void {
    for (const s of streams) {
      if (this.#known.has(s)) continue;
      this.#known.add(s);
      this.#history.set(s, '0');
    }
    if (this.#known.size === streams.length) return;
    const current = new Set(streams);
    for (const s of this.#known) {
      if (current.has(s)) continue;
      this.#known.delete(s);
      this.#history.delete(s);
      this.#found.delete(s);
    }
    if (this.#sweep !== undefined) this.#sweep = this.#sweep.filter((s) => current.has(s));
  }
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const n = by % items.length;
  return [...items.slice(n), ...items.slice(0, n)];
}

/**
 * The read lanes of an agent's streams (inbox first, then its pools): on a Redis Cluster one
 * lane per hash slot, since one XREADGROUP may only name keys of one slot — the inbox
 * (`{a:<agent>}`) and each pool (`{pool:<capability>}`, with every stream sharing that tag) each
 * land in their own —, standalone a single lane with every stream, read by one call as before.
 * Each lane has its own {@link ReadPlanner}, blocking connection and share of the free slots.
 *
 * @param slotOf - the hash slot of a key, or undefined when one server holds every key
 */
export function readLanes(
  streams: readonly string[],
  slotOf: ((key: string) => number) | undefined,
): { key: string; streams: string[] }[] {
  if (slotOf === undefined)
    return streams.length > 0 ? [{ key: 'all', streams: [...streams] }] : [];
  const lanes = new Map<string, string[]>();
  for (const stream of streams) {
    const key = `slot:${slotOf(stream)}`;
    const lane = lanes.get(key);
    if (lane) lane.push(stream);
    else lanes.set(key, [stream]);
  }
  return [...lanes].map(([key, group]) => ({ key, streams: group }));
}
