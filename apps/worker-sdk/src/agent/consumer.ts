import {
  clusterNodeOf,
  disconnectNow,
  duplicateRedis,
  isCluster,
  keySlot,
  type RedisClient,
} from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { bandOfStream, POOL_BANDS } from '@agent-reach/protocol';
import { Backoff, type CompiledBackoff } from '../util/backoff.ts';
import { settlesWithin, sleep } from '../util/sleep.ts';
import { ReadPlanner, readLanes } from './read-plan.ts';
import { closeRedis, parseReadReply, redisErrorCode, type ReadOrigin } from './redis-util.ts';
import { SlotShares } from './slot-shares.ts';
import type { Delivery, TaskRunner } from './runner.ts';
import type { Slots } from './slots.ts';

/** Where to read: the streams, their group and this instance's consumer name. */
export interface ReadSource {
  group: string;
  consumer: string;
  /** The agent's own inbox: always read (probes and re-routed tasks come here, also for pull agents). */
  inbox: string;
  /** Pull agents: the pool streams of their capabilities; empty for push agents. */
  pools: readonly string[];
}

/** What the read loop needs from the agent. */
export interface ConsumerContext {
  /** Dedicated connection: XREADGROUP BLOCK holds it. */
  blocking: RedisClient;
  /** Command connection, used to CLIENT UNBLOCK the blocking one at stop. */
  control: RedisClient;
  /** The current registration's streams and group (read every loop, so a re-registration that moves them is followed). */
  source(): ReadSource | undefined;
  runner: TaskRunner;
  slots: Slots;
  blockMs: number;
  retry: CompiledBackoff;
  logger: Logger;
  /** A stream or group is gone (Redis lost its data): the registry must create them again. */
  onGroupMissing(): void;
}

/** One blocking read over streams of one hash slot, with its connection and its plan. */
interface Lane {
  readonly key: string;
  streams: readonly string[];
  readonly conn: RedisClient;
  /** The lane's own connection (not the agent's `blocking` one): closed with the lane. */
  readonly own: boolean;
  readonly plan: ReadPlanner;
  /** CLIENT ID of the connection the read runs on, and that connection (a node's on a Cluster). */
  clientId: number | undefined;
  node: RedisClient | undefined;
  blocked: boolean;
  loop: Promise<void> | undefined;
}

/**
 * The read loop: `while (!stopping)` wait for a free slot, XREADGROUP at most that many entries
 * over the inbox (and a pull agent's pools), hand them to the runner. {@link ReadPlanner} shapes
 * each call: first this consumer's own pending entries (after a crash, a restart with the same
 * instance_id picks up what it had read and never acknowledged), then new ones, never more than
 * the free slots in total.
 *
 * On a Redis Cluster one XREADGROUP may only name keys of one slot, so the streams are read in
 * lanes ({@link readLanes}): one loop per slot group, each with its own blocking connection
 * (a duplicate of `blocking`), sharing the free slots through {@link SlotShares} so that no lane
 * starves and together they never read more than there are free slots. Standalone, one lane
 * reads every stream in one call.
 */
/** The BLOCK of a read while another lane waits for its slot, ms. */
const CONTENDED_BLOCK_MS = 50;

export class Consumer {
  #stopping = false;
  readonly #stop = new AbortController();
  readonly #lanes = new Map<string, Lane>();
  readonly #shares: SlotShares;
  /** The last source read and its streams' origins (a read and its acks share them). */
  #origins: { source: ReadSource; origins: Map<string, ReadOrigin> } | undefined;

  constructor(private readonly ctx: ConsumerContext) {
    this.#shares = new SlotShares(ctx.slots, () => Math.max(1, this.#lanes.size));
  }

  /** Starts the loop (once). */
  start(): void {
    if (!this.#stopping) this.#follow();
  }

  /** The connections the lanes opened beside `blocking` (they get new credentials too). */
  connections(): RedisClient[] {
    return [...this.#lanes.values()].filter((l) => l.own).map((l) => l.conn);
  }

  /**
   * Stops reading: interrupts each BLOCK with CLIENT UNBLOCK (entries are never read and then
   * dropped, as a disconnect mid-read could do), and resolves once every loop has exited.
   * Falls back to dropping a blocking connection if Redis cannot be reached.
   */
  async stop(): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      this.#stop.abort();
      await Promise.all([...this.#lanes.values()].map((lane) => this.#unblock(lane)));
    }
    await Promise.all([...this.#lanes.values()].map((lane) => this.#stopLane(lane)));
  }

  async #stopLane(lane: Lane): Promise<void> {
    if (lane.loop !== undefined && !(await settlesWithin(lane.loop, this.ctx.blockMs + 1000))) {
      this.ctx.logger.warn('read loop did not stop in time; dropping its connection');
      disconnectNow(lane.conn);
      await lane.loop;
    }
    if (lane.own) await closeRedis(lane.conn);
  }

  async #unblock(lane: Lane): Promise<void> {
    const id = lane.clientId;
    if (!lane.blocked || id === undefined) return;
    try {
      const control = this.#nodeOf(this.ctx.control, lane.streams[0] ?? '');
      if (control === undefined) throw new Error('no node known for the lane');
      await control.client('UNBLOCK', id);
    } catch (err: unknown) {
      this.ctx.logger.debug({ err }, 'CLIENT UNBLOCK failed; the read ends at its BLOCK timeout');
    }
  }

  /** The connection of `client` that serves `key`: itself standalone, a master's on a Cluster. */
  #nodeOf(client: RedisClient, key: string): RedisClient | undefined {
    return isCluster(client) ? clusterNodeOf(client, key) : client;
  }

  /**
   * Makes the lanes match the current source: a lane for each slot group (started), and the
   * streams of each lane brought up to date. A lane whose group is gone ends by itself.
   */
  #follow(): ReadonlyMap<string, readonly string[]> {
    const source = this.ctx.source();
    const wanted = new Map<string, readonly string[]>();
    if (source === undefined || this.#stopping) return wanted;
    const slotOf = isCluster(this.ctx.blocking) ? keySlot : undefined;
    for (const { key, streams } of readLanes([...this.#originsOf(source).keys()], slotOf)) {
      wanted.set(key, streams);
      const lane = this.#lanes.get(key);
      if (lane !== undefined) {
        lane.streams = streams;
        continue;
      }
      // The first lane reads on the agent's own blocking connection; later ones on their own.
      const own = [...this.#lanes.values()].some((l) => !l.own);
      const conn = own ? duplicateRedis(this.ctx.blocking) : this.ctx.blocking;
      const added: Lane = {
        key,
        streams,
        conn,
        own,
        plan: new ReadPlanner(),
        clientId: undefined,
        node: undefined,
        blocked: false,
        loop: undefined,
      };
      if (own)
        conn.on('error', (err: unknown) =>
          this.ctx.logger.debug({ err, lane: key }, 'lane connection error'),
        );
      this.#lanes.set(key, added);
      added.loop = this.#run(added);
    }
    return wanted;
  }

  async #run(lane: Lane): Promise<void> {
    const backoff = new Backoff(this.ctx.retry);
    while (!this.#stopping) {
      const source = this.ctx.source();
      if (source === undefined) break;
      // Gone from the source (a re-registration moved the streams): this lane ends.
      if (!this.#follow().has(lane.key)) {
        this.#lanes.delete(lane.key);
        if (lane.own) void closeRedis(lane.conn);
        break;
      }
      // As before lanes: a free slot first (tasks that just finished give theirs back meanwhile).
      await this.ctx.slots.whenFree(this.#stop.signal);
      const share = await this.#shares.reserve(this.#stop.signal);
      if (this.#stopping || share === 0) {
        if (share > 0) this.#shares.settle(share, 0);
        break;
      }
      try {
        await this.#readOnce(lane, source, share);
        backoff.reset();
      } catch (err: unknown) {
        if (this.#stopping) break;
        const code = redisErrorCode(err);
        const delayMs = backoff.next();
        if (code === 'NOGROUP') {
          this.ctx.logger.error(
            { err, group: source.group, delayMs },
            'stream or group missing; re-registering',
          );
          this.ctx.onGroupMissing();
        } else {
          this.ctx.logger.warn({ err, delayMs }, 'read failed; retrying');
        }
        await sleep(delayMs, this.#stop.signal);
      }
    }
    this.ctx.logger.debug({ lane: lane.key }, 'read loop stopped');
  }

  /** The origins of a source's streams, made again only when the source changes. */
  #originsOf(source: ReadSource): Map<string, ReadOrigin> {
    const known = this.#origins;
    if (known?.source === source) return known.origins;
    const origins = originsOf(source);
    this.#origins = { source, origins };
    return origins;
  }

  /** CLIENT ID of the connection a lane's read runs on (a reconnect gets a new one). */
  async #clientIdOf(lane: Lane): Promise<number | undefined> {
    if (lane.clientId !== undefined) return lane.clientId;
    const node = this.#nodeOf(lane.conn, lane.streams[0] ?? '');
    // A Cluster client learns its slot map with its first command: the id comes a read later.
    if (node === undefined) return undefined;
    if (node !== lane.node) {
      lane.node = node;
      node.once('close', () => {
        lane.clientId = undefined;
        lane.node = undefined;
      });
    }
    lane.clientId = await node.client('ID');
    return lane.clientId;
  }

  /** One read of `lane` with `share` slots held; every one of them is settled before it returns. */
  async #readOnce(lane: Lane, source: ReadSource, share: number): Promise<void> {
    try {
      if (lane.clientId === undefined) await this.#clientIdOf(lane);
      if (this.#stopping) return;
      const origins = this.#originsOf(source);
      // The inbox first (probes, re-routed tasks), then pool bands highest first (pool-bands.ts).
      const call = lane.plan.next(lane.streams, share, (s) =>
        origins.get(s)?.kind === 'inbox' ? POOL_BANDS : bandOfStream(s),
      );
      const { group, consumer } = source;
      const keysAndIds = [...call.streams, ...call.ids];
      lane.blocked = call.block;
      let reply: unknown;
      try {
        reply = call.block
          ? await lane.conn.xreadgroup(
              'GROUP',
              group,
              consumer,
              'COUNT',
              call.count,
              'BLOCK',
              // Another lane waits for the slot this read holds (more lanes than free slots, on
              // a Cluster): a short BLOCK, so the lanes take turns instead of each waiting a
              // whole blockMs on an empty stream while another stream's task waits.
              this.#shares.contended
                ? Math.min(this.ctx.blockMs, CONTENDED_BLOCK_MS)
                : this.ctx.blockMs,
              'STREAMS',
              ...keysAndIds,
            )
          : await lane.conn.xreadgroup(
              'GROUP',
              group,
              consumer,
              'COUNT',
              call.count,
              'STREAMS',
              ...keysAndIds,
            );
      } finally {
        lane.blocked = false;
      }
      const entries = parseReadReply(reply);
      const { resumed } = lane.plan.done(call, entries);
      if (resumed > 0)
        this.ctx.logger.info(
          { count: resumed, stream: call.streams[0] },
          'resuming tasks this instance read before and never acknowledged',
        );
      if (entries.length === 0) return;
      this.#shares.settle(share, entries.length);
      share = 0;
      const release = (): void => this.ctx.slots.release();
      const batch: Delivery[] = [];
      for (const entry of entries) {
        const origin = origins.get(entry.stream);
        if (origin !== undefined) batch.push({ entry, origin });
        else {
          // Unreachable: Redis answers only for the streams asked.
          this.ctx.logger.error(
            { stream: entry.stream, messageId: entry.id },
            'entry from a stream not read; left pending',
          );
          release();
        }
      }
      for (const done of this.ctx.runner.accept(batch)) {
        void done.then(release, (err: unknown) => {
          this.ctx.logger.error({ err }, 'task handling failed unexpectedly');
          release();
        });
      }
    } finally {
      if (share > 0) this.#shares.settle(share, 0);
    }
  }
}

/** The streams to read, inbox first (probes and re-routed tasks go before pool work), each with its origin. */
function originsOf(source: ReadSource): Map<string, ReadOrigin> {
  const origins = new Map<string, ReadOrigin>([
    [source.inbox, { stream: source.inbox, group: source.group, kind: 'inbox' }],
  ]);
  for (const stream of source.pools)
    if (!origins.has(stream)) origins.set(stream, { stream, group: source.group, kind: 'pool' });
  return origins;
}
