import { setTimeout as sleep } from 'node:timers/promises';
import { disconnectNow, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { SYNC_GROUP, type ReachKeys } from '@agent-reach/protocol';
import type { AckApplier } from './ack-applier.ts';
import { AckChains, type AckEntry } from './ack-chains.ts';

type State = 'idle' | 'running' | 'closing' | 'closed';
type StreamReply = [string, [string, string[]][]][] | null;

/** First and longest pause before this instance applies again the entries it failed to apply. */
const RETRY_OWN_MIN_MS = 500;
const RETRY_OWN_MAX_MS = 30_000;

/** Settings of the acks consumer loop. */
export interface AckConsumerSettings {
  /** Consumer name of this instance in the `sync` group. */
  consumer: string;
  /** The shard of the acks stream this consumer reads (`keys.acks(shard)`). @default keys.acks() */
  stream?: string;
  /** @default 1000 */
  blockMs?: number;
  /** @default 200 */
  batch?: number;
  /**
   * How long an entry stays pending with a consumer before another instance claims it
   * (XAUTOCLAIM's min-idle-time). The service passes twice the housekeeping lock's lease, so a
   * killed instance's share of the acks is applied about as soon as its duties move on.
   * @default 6000
   */
  claimIdleMs?: number;
  /** How often entries idle past `claimIdleMs` are looked for. @default 1000 */
  claimEveryMs?: number;
  /**
   * How long applied entries wait to share one XACK and XDEL, ms: at a few hundred acks a second
   * each batch's own round trip is a socket write and a reply, while an entry acknowledged a
   * moment later only stays pending that moment longer. 0: the entries applied in one turn of
   * the event loop. @default 0
   */
  ackAfterMs?: number;
  /**
   * How long to wait before the next read after a batch of two or more entries (but less than a
   * full one), ms: acks that come faster than a batch is applied then share its script calls and
   * writes instead of making batches of two or three. A batch of one (a quiet stream) or a full
   * batch (a backlog) reads again at once. 0: never. @default 0
   */
  lingerMs?: number;
}

/** What an {@link AckConsumer} reads with and hands its entries to. */
export interface AckConsumerOptions {
  /** The connection its blocking XREADGROUP waits on (disconnected by `close`). */
  blocking: RedisClient;
  /** The connection for XACK, XAUTOCLAIM and the group. */
  redis: RedisClient;
  keys: ReachKeys;
  applier: AckApplier;
  settings: AckConsumerSettings;
  logger: Logger;
}

/**
 * Reads a shard of the acks stream in the `sync` consumer group (shared by every registry-sync instance)
 * on its own blocking connection, applies each entry, then XACKs and deletes it. Entries left
 * pending by a crashed instance are claimed once idle for `claimIdleMs` (XAUTOCLAIM) and applied
 * again. That is safe even when the instance holding them is alive but slow: applying is
 * idempotent (every script step refuses a stage it has seen, one completion per task reaches
 * its topic), and entries this instance holds itself are skipped.
 *
 * One batch at a time: the next read goes out once the batch before it is applied, so the acks
 * that arrive meanwhile make the next batch. Under load the batches grow and each ack costs less
 * (its agent and topic steps share script calls, its commands share writes); with `lingerMs`, a
 * read that found a few entries waits that long before the next, so that at moderate rates the
 * batches grow too. Within a batch, entries of different tasks are applied concurrently, the
 * entries of one task one after the other in stream order (see {@link AckChains}); the XACKs of
 * everything applied meanwhile (or within `ackAfterMs`) leave in one round trip.
 */
export class AckConsumer {
  private state: State = 'idle';
  private loop: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly log: Logger;
  private lastClaimAt = 0;
  /** When to apply again the entries this instance failed to apply or acknowledge (0: none waiting). */
  private retryOwnAt = 0;
  private retryOwnDelayMs = RETRY_OWN_MIN_MS;
  private readonly chains: AckChains;
  /** Entries being applied, held for a retry, or waiting for their XACK: a re-read skips them. */
  private readonly busy = new Set<string>();
  private toAck: string[] = [];
  private flushing: Promise<void> | undefined;
  private ackTimer: NodeJS.Timeout | undefined;
  private readonly stream: string;

  private readonly blocking: RedisClient;
  private readonly redis: RedisClient;
  private readonly keys: ReachKeys;
  private readonly settings: AckConsumerSettings;

  constructor(o: AckConsumerOptions) {
    this.blocking = o.blocking;
    this.redis = o.redis;
    this.keys = o.keys;
    this.settings = o.settings;
    const { applier } = o;
    this.stream = o.settings.stream ?? o.keys.acks();
    this.log = o.logger.child({ module: 'ack-consumer', stream: this.stream });
    this.chains = new AckChains(
      async (id, fields) => {
        await applier.apply(id, fields, this.stream);
      },
      {
        applied: (id) => {
          this.toAck.push(id);
          this.flushing ??= new Promise<void>((resolve) => {
            const after = this.settings.ackAfterMs ?? 0;
            if (after > 0) this.ackTimer = setTimeout(resolve, after);
            else setImmediate(resolve);
          }).then(() => this.flushAcks());
        },
        failed: (id, err) => {
          this.log.warn({ err, entry_id: id }, 'ack not applied; will retry');
          this.scheduleRetryOwn();
        },
      },
    );
  }

  /** Creates the group if needed and starts the loop. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    await this.ensureGroup();
    this.state = 'running';
    this.loop = this.run();
  }

  /** Stops reading, lets the entries being applied finish and XACKs them; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.state === 'running') this.state = 'closing';
      disconnectNow(this.blocking);
      await this.loop;
      await this.chains.settled();
      await this.flushAcks();
      this.state = 'closed';
    })();
    return this.closing;
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.stream, SYNC_GROUP, '0', 'MKSTREAM');
    } catch (err: unknown) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
  }

  private async run(): Promise<void> {
    const blockMs = this.settings.blockMs ?? 1000;
    const batch = this.settings.batch ?? 200;
    const lingerMs = this.settings.lingerMs ?? 0;
    while (this.state === 'running') {
      try {
        await this.claimStale();
        await this.retryOwn();
        const reply = (await this.blocking.xreadgroup(
          'GROUP',
          SYNC_GROUP,
          this.settings.consumer,
          'COUNT',
          batch,
          'BLOCK',
          this.retryOwnAt > 0 ? Math.min(blockMs, 250) : blockMs,
          'STREAMS',
          this.stream,
          '>',
        )) as StreamReply;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) await this.process(entries);
        if (lingerMs > 0 && entries.length >= 2 && entries.length < batch) await sleep(lingerMs);
      } catch (err: unknown) {
        if (this.state !== 'running') break;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) {
          await this.ensureGroup().catch(() => undefined);
          continue;
        }
        this.log.warn({ err }, 'acks read failed; retrying');
        await sleep(250);
      }
    }
  }

  /** Applies entries not already in hand; resolves once they have settled. */
  private async process(entries: AckEntry[]): Promise<void> {
    const fresh = entries.filter(([id]) => !this.busy.has(id));
    for (const [id] of fresh) this.busy.add(id);
    await Promise.all(fresh.map((entry) => this.chains.add(entry)));
  }

  /** XACKs and deletes the applied entries, one round trip for all that were applied meanwhile. */
  private async flushAcks(): Promise<void> {
    // Closing, or a retry: what waits for `ackAfterMs` goes now.
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    this.flushing = undefined;
    const done = this.toAck;
    if (done.length === 0) return;
    this.toAck = [];
    try {
      const replies =
        (await this.redis
          .pipeline()
          .xack(this.stream, SYNC_GROUP, ...done)
          .xdel(this.stream, ...done)
          .exec()) ?? [];
      const failed = replies.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
      for (const id of done) this.busy.delete(id);
    } catch (err: unknown) {
      // Applied but still pending: acknowledged again with the next retry.
      this.log.warn({ err, count: done.length }, 'applied acks not acknowledged; will retry');
      this.toAck.push(...done);
      this.scheduleRetryOwn();
    }
  }

  private scheduleRetryOwn(): void {
    if (this.retryOwnAt === 0) this.retryOwnAt = Date.now() + this.retryOwnDelayMs;
  }

  /**
   * Applies again, soon, the entries this instance could not apply (Redis went away mid-batch,
   * between an ack's agent step and its task step), and acknowledges those applied whose XACK
   * failed. Left to the XAUTOCLAIM of idle entries (this instance's own are skipped while it
   * holds them), their tasks would wait with their slot already released, and by then the
   * agent's epoch may have moved on, so the ack would be refused as stale and the task never
   * finish.
   */
  private async retryOwn(): Promise<void> {
    if (this.retryOwnAt === 0 || Date.now() < this.retryOwnAt) return;
    this.retryOwnAt = 0;
    const held = this.chains.takeHeld();
    const applied = await Promise.all(held.map((entry) => this.chains.add(entry)));
    await this.flushAcks();
    if (this.retryOwnAt === 0) this.retryOwnDelayMs = RETRY_OWN_MIN_MS;
    else this.retryOwnDelayMs = Math.min(2 * this.retryOwnDelayMs, RETRY_OWN_MAX_MS);
    if (applied.length > 0)
      this.log.info(
        { count: applied.length, applied: applied.filter(Boolean).length },
        'acks applied again after a failure',
      );
  }

  private async claimStale(): Promise<void> {
    const now = Date.now();
    if (now - this.lastClaimAt < (this.settings.claimEveryMs ?? 1000)) return;
    this.lastClaimAt = now;
    const reply = (await this.redis.xautoclaim(
      this.stream,
      SYNC_GROUP,
      this.settings.consumer,
      this.settings.claimIdleMs ?? 6000,
      '0-0',
      'COUNT',
      200,
    )) as [string, [string, string[] | null][]];
    const entries = (reply[1] ?? []).filter((e): e is AckEntry => Array.isArray(e[1]));
    if (entries.length > 0) {
      this.log.info({ count: entries.length }, 'claimed acks left by another instance');
      await this.process(entries);
    }
  }
}
