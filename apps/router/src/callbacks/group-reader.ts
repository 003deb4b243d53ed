import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';
import { LeaseLock } from '@agent-reach/dispatch';

/** A stream entry as XREADGROUP and XAUTOCLAIM return it (fields null once deleted). */
export type GroupEntry = [string, string[] | null];

/** What a group reader reads, and what it does with the entries. */
export interface GroupReaderOptions {
  /** Its own connection: the blocking group read holds it. */
  conn: RedisClient;
  /** The shared connection (group creation, claims). */
  redis: RedisClient;
  /** The stream (a router topic) and its consumer group. */
  key: string;
  group: string;
  logger: Logger;
  /** Names the reader in its log lines (`A2A push`, `webhook`). */
  what: string;
  /** How long an entry may stay unacknowledged before another consumer claims it. */
  claimIdleMs: number;
  /** How long one group read blocks. */
  blockMs: number;
  /** How long an idle stream made here is kept, seconds. */
  retentionS: () => number;
  /** How many entries may be taken now; `waitForRoom` is awaited while it is 0. */
  room: () => number;
  /** Resolves once room may have freed. @default never needed (room is never 0) */
  waitForRoom?: () => Promise<void>;
  /** Handles the entries read or claimed; what it leaves unacknowledged is claimed later. */
  handle: (entries: GroupEntry[]) => Promise<void>;
  /**
   * Entries handled in stream order by one consumer at a time: the one holding this lease
   * (`redis` must have lock-1.lua loaded). The lease's owner is {@link GroupReader.consumer}.
   */
  turn?: { key: string; leaseMs: number };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * One consumer of a consumer group on a router topic, the loop the A2A push forwarder and the
 * webhook forwarder share: it makes the group (and the stream, expiring like an idle topic, the
 * group with it; NOGROUP makes both again), reads new entries as room allows, and every
 * `claimIdleMs / 4` (at least 1 s) takes over the entries another consumer left unacknowledged
 * for `claimIdleMs` (it stopped or died): handling is at least once.
 *
 * With a `turn`, only the consumer holding its lease reads: every consumer tries to take the
 * lease every third of it, and one that takes it first takes over every entry still pending, in
 * stream order, before it reads new ones; after a failed `handle` it takes them over again. So
 * entries are handled in stream order across routers, except where a holder stalled past its
 * lease handles entries after its successor did: `handle` should check the lease where order
 * matters (webhook-enqueue-6.lua does).
 */
export class GroupReader {
  readonly consumer = `router-${randomBytes(6).toString('hex')}`;
  readonly #stop = new AbortController();
  readonly #lease: LeaseLock | undefined;
  #loop: Promise<void> | undefined;
  #nextClaim = 0;
  /** With a turn: whether this consumer held the lease when it last looked. */
  #held = false;
  /** With a turn: every pending entry is to be taken over before new ones are read. */
  #takeOver = true;
  #renewal: NodeJS.Timeout | undefined;
  #gained: (() => void) | undefined;

  constructor(private readonly o: GroupReaderOptions) {
    const turn = o.turn;
    this.#lease =
      turn &&
      new LeaseLock({ redis: o.redis, key: turn.key, owner: this.consumer, leaseMs: turn.leaseMs });
  }

  /** Aborted once {@link close} was called. */
  get stopped(): AbortSignal {
    return this.#stop.signal;
  }

  /** Starts the read loop (once). */
  start(): void {
    if (this.#loop) return;
    if (this.#lease && this.o.turn) {
      void this.#renew();
      this.#renewal = setInterval(() => void this.#renew(), this.o.turn.leaseMs / 3);
    }
    this.#loop = this.#run();
  }

  /** Ends the loop (its blocking read is cut by disconnecting `conn`) and gives up its turn. */
  async close(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#renewal);
    this.#gained?.();
    disconnectNow(this.o.conn);
    await this.#loop;
    // Another router's forwarder takes over at its next try, not a lease later.
    if (this.#held) await this.#lease?.release().catch(() => undefined);
  }

  /** Takes or renews the turn's lease; one that takes it anew takes over the pending entries. */
  async #renew(): Promise<void> {
    if (!this.#lease || this.#stop.signal.aborted) return;
    let held = false;
    try {
      held = await this.#lease.hold();
    } catch (err: unknown) {
      this.o.logger.warn({ err }, `${this.o.what} lease not renewed; reading paused`);
    }
    if (held && !this.#held) this.#takeOver = true;
    this.#held = held;
    if (held) this.#gained?.();
  }

  /** Resolves once this consumer holds the turn (or is closed). */
  #waitForTurn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#gained = () => {
        this.#gained = undefined;
        resolve();
      };
    });
  }

  async #ensureGroup(): Promise<void> {
    const { redis, key, group } = this.o;
    try {
      await redis.xgroup('CREATE', key, group, '0', 'MKSTREAM');
    } catch (err: unknown) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
      return;
    }
    if ((await redis.pttl(key)) === -1) await redis.expire(key, this.o.retentionS());
  }

  async #run(): Promise<void> {
    const stopped = this.#stop.signal;
    let grouped = false;
    while (!stopped.aborted) {
      try {
        if (!grouped) {
          await this.#ensureGroup();
          grouped = true;
        }
        while (this.o.room() <= 0 && !stopped.aborted) await this.o.waitForRoom?.();
        if (this.#lease) {
          while (!this.#held && !stopped.aborted) await this.#waitForTurn();
          if (stopped.aborted) return;
          if (this.#takeOver) {
            await this.#claim(0);
            this.#takeOver = false;
          }
        }
        if (Date.now() >= this.#nextClaim) {
          this.#nextClaim = Date.now() + Math.max(1000, this.o.claimIdleMs / 4);
          await this.#claim(this.o.claimIdleMs);
        }
        const room = this.o.room();
        if (room <= 0) continue;
        const reply = (await this.o.conn.xreadgroup(
          'GROUP',
          this.o.group,
          this.consumer,
          'COUNT',
          room,
          'BLOCK',
          this.o.blockMs,
          'STREAMS',
          this.o.key,
          '>',
        )) as [string, GroupEntry[]][] | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) await this.o.handle(entries);
      } catch (err: unknown) {
        if (stopped.aborted) return;
        // The topic expired while idle (it takes its group with it): make the group again.
        if (String((err as Error).message).includes('NOGROUP')) grouped = false;
        else this.o.logger.warn({ err }, `${this.o.what} read failed; retrying`);
        await sleep(250, stopped);
        if (this.#lease) {
          // The entries left pending go first; the lease may have been lost (look again).
          this.#held = false;
          await this.#renew();
          this.#takeOver = true;
        }
      }
    }
  }

  /** Takes over entries left unacknowledged for `minIdleMs`, in stream order, as room allows. */
  async #claim(minIdleMs: number): Promise<void> {
    let cursor = '0-0';
    do {
      const room = this.o.room();
      if (room <= 0) return;
      const [next, entries] = (await this.o.redis.xautoclaim(
        this.o.key,
        this.o.group,
        this.consumer,
        minIdleMs,
        cursor,
        'COUNT',
        room,
      )) as [string, GroupEntry[]];
      if (entries.length > 0) await this.o.handle(entries);
      cursor = next;
    } while (cursor !== '0-0' && !this.#stop.signal.aborted);
  }
}
