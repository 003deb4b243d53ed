import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';

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
 */
export class GroupReader {
  readonly consumer = `router-${randomBytes(6).toString('hex')}`;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #nextClaim = 0;

  constructor(private readonly o: GroupReaderOptions) {}

  /** Aborted once {@link close} was called. */
  get stopped(): AbortSignal {
    return this.#stop.signal;
  }

  /** Starts the read loop (once). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Ends the loop (its blocking read is cut by disconnecting `conn`). */
  async close(): Promise<void> {
    this.#stop.abort();
    disconnectNow(this.o.conn);
    await this.#loop;
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
        if (Date.now() >= this.#nextClaim) {
          this.#nextClaim = Date.now() + Math.max(1000, this.o.claimIdleMs / 4);
          await this.#claim();
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
      }
    }
  }

  /** Takes over entries another consumer left unacknowledged for `claimIdleMs`, as room allows. */
  async #claim(): Promise<void> {
    let cursor = '0-0';
    do {
      const room = this.o.room();
      if (room <= 0) return;
      const [next, entries] = (await this.o.redis.xautoclaim(
        this.o.key,
        this.o.group,
        this.consumer,
        this.o.claimIdleMs,
        cursor,
        'COUNT',
        room,
      )) as [string, GroupEntry[]];
      if (entries.length > 0) await this.o.handle(entries);
      cursor = next;
    } while (cursor !== '0-0' && !this.#stop.signal.aborted);
  }
}
