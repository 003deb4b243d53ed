import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { SYNC_GROUP, type ReachKeys } from '@agent-reach/protocol';
import type { AckApplier } from './ack-applier.ts';

type State = 'idle' | 'running' | 'closing' | 'closed';
type StreamReply = [string, [string, string[]][]][] | null;

/** First and longest pause before this instance applies again the entries it failed to apply. */
const RETRY_OWN_MIN_MS = 500;
const RETRY_OWN_MAX_MS = 30_000;

/** Settings of the acks consumer loop. */
export interface AckConsumerSettings {
  /** Consumer name of this instance in the `sync` group. */
  consumer: string;
  /** @default 1000 */
  blockMs?: number;
  /** @default 200 */
  batch?: number;
}

/**
 * Reads the acks stream in the `sync` consumer group (shared by every registry-sync instance)
 * on its own blocking connection, applies each entry, then XACKs and deletes it. Entries left
 * pending by a crashed instance are claimed after a minute (XAUTOCLAIM) and applied again,
 * which is safe because applying is idempotent.
 */
export class AckConsumer {
  private state: State = 'idle';
  private loop: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly log: Logger;
  private lastClaimAt = 0;
  /** When to re-read this instance's own unapplied entries (0: none waiting). */
  private retryOwnAt = 0;
  private retryOwnDelayMs = RETRY_OWN_MIN_MS;

  constructor(
    private readonly blocking: Redis,
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly applier: AckApplier,
    private readonly settings: AckConsumerSettings,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'ack-consumer' });
  }

  /** Creates the group if needed and starts the loop. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    await this.ensureGroup();
    this.state = 'running';
    this.loop = this.run();
  }

  /** Stops reading after the current batch; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.state === 'running') this.state = 'closing';
      this.blocking.disconnect();
      await this.loop;
      this.state = 'closed';
    })();
    return this.closing;
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.keys.acks(), SYNC_GROUP, '0', 'MKSTREAM');
    } catch (err: unknown) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
  }

  private async run(): Promise<void> {
    const blockMs = this.settings.blockMs ?? 1000;
    const batch = this.settings.batch ?? 200;
    while (this.state === 'running') {
      try {
        await this.claimStale();
        await this.retryOwn(batch);
        const reply = (await this.blocking.xreadgroup(
          'GROUP', SYNC_GROUP, this.settings.consumer,
          'COUNT', batch, 'BLOCK', blockMs,
          'STREAMS', this.keys.acks(), '>',
        )) as StreamReply;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) await this.process(entries);
      } catch (err: unknown) {
        if (this.state !== 'running') break;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) {
          await this.ensureGroup().catch(() => undefined);
          continue;
        }
        this.log.warn({ err }, 'acks read failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  private async process(entries: [string, string[]][]): Promise<void> {
    // Acks of different tasks are applied concurrently (their commands share round trips on the
    // auto-pipelined connection); acks of one task keep their order.
    const byTask = new Map<string, [string, string[]][]>();
    for (const entry of entries) {
      const fields = entry[1];
      const i = fields.indexOf('task_id');
      const key = i >= 0 && i % 2 === 0 ? (fields[i + 1] ?? '') : '';
      const group = byTask.get(key);
      if (group) group.push(entry);
      else byTask.set(key, [entry]);
    }
    const done: string[] = [];
    let failed = false;
    await Promise.all(
      [...byTask.values()].map(async (group) => {
        for (const [id, fields] of group) {
          try {
            await this.applier.apply(id, fields);
            done.push(id);
          } catch (err: unknown) {
            // Left pending in this consumer: applied again by retryOwn() shortly; the task's
            // later acks wait with it, so they keep their order.
            failed = true;
            this.log.warn({ err, entry_id: id }, 'ack not applied; will retry');
            return;
          }
        }
      }),
    );
    if (failed) {
      this.retryOwnAt = Date.now() + this.retryOwnDelayMs;
      this.retryOwnDelayMs = Math.min(2 * this.retryOwnDelayMs, RETRY_OWN_MAX_MS);
    }
    if (done.length > 0) {
      await this.redis.pipeline().xack(this.keys.acks(), SYNC_GROUP, ...done).xdel(this.keys.acks(), ...done).exec();
    }
  }

  /**
   * Applies again, soon, the entries this instance read but could not apply (Redis went away
   * mid-batch, between an ack's agent step and its task step). Left to the minute-idle XAUTOCLAIM,
   * their tasks would hang that long with their slot already released, and by then the agent's
   * epoch may have moved on, so the ack would be refused as stale and the task never finish.
   */
  private async retryOwn(batch: number): Promise<void> {
    if (this.retryOwnAt === 0 || Date.now() < this.retryOwnAt) return;
    const reply = (await this.redis.xreadgroup(
      'GROUP', SYNC_GROUP, this.settings.consumer,
      'COUNT', batch,
      'STREAMS', this.keys.acks(), '0',
    )) as [string, [string, string[] | null][]][] | null;
    this.retryOwnAt = 0;
    const entries = (reply?.[0]?.[1] ?? []).filter((e): e is [string, string[]] => Array.isArray(e[1]));
    if (entries.length > 0) await this.process(entries);
    if (this.retryOwnAt === 0) this.retryOwnDelayMs = RETRY_OWN_MIN_MS;
  }

  private async claimStale(): Promise<void> {
    const now = Date.now();
    if (now - this.lastClaimAt < 10_000) return;
    this.lastClaimAt = now;
    const reply = (await this.redis.xautoclaim(this.keys.acks(), SYNC_GROUP, this.settings.consumer, 60_000, '0-0', 'COUNT', 200)) as [
      string,
      [string, string[] | null][],
    ];
    const entries = (reply[1] ?? []).filter((e): e is [string, string[]] => Array.isArray(e[1]));
    if (entries.length > 0) {
      this.log.info({ count: entries.length }, 'claimed acks left by another instance');
      await this.process(entries);
    }
  }
}
