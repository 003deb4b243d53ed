import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeTaskField,
  FINAL_TASK_STATUSES,
  TaskRecordField,
  type ReachKeys,
  type TaskStatus,
} from '@agent-reach/protocol';
import { httpError, type Principal } from '@agent-reach/service-kit';
import type { KeyLimits } from './key-limits.ts';
import { inflightTakeScript, type InflightTakeReply } from './inflight-take.ts';

/** A slot taken for a submission: given back when no new task came of it. */
export interface QuotaSlot {
  release(): Promise<void>;
}

const NOTHING_TO_RELEASE: QuotaSlot = { release: async () => undefined };

/** How many of a full quota's oldest tasks are checked for an end per refused submission. */
const RECONCILE_MAX = 1000;
/**
 * A full quota is looked through at most this often per key and process: a client that keeps
 * submitting while its quota is full costs a few lookups a second, not one per refusal.
 */
const RECONCILE_EVERY_MS = 50;

/** Settings of the in-flight quota. */
export interface InflightQuotaOptions {
  redis: RedisClient;
  keys: ReachKeys;
  limits: KeyLimits;
  /**
   * A task counts against its key for at most this long (then its slot is freed whether or not
   * its end was seen), so a lost removal cannot block a key for ever. @default 24 h
   */
  maxAgeMs?: number;
}

const ENDED = new Set<TaskStatus>(FINAL_TASK_STATUSES);

/**
 * Tasks in flight per key (docs/SECURITY.md, Quotas): a sorted set per key of its tasks accepted
 * and not yet ended, shared by every router. A submission takes a slot (429 RATE_LIMITED with
 * Retry-After when the key's `max_inflight` is reached); a submission that made no new task gives
 * it back. A task's end — completed, dead-lettered (a final failure is one), or expired — frees
 * its slot: when the quota is full, the oldest tasks of the set are looked up in one pipeline and
 * those that ended leave it (ZREM, idempotent, whichever router or request does it; at most every
 * 50 ms per key and router), so no step of registry-sync's hot path pays for quotas. Slots older than `maxAgeMs` are dropped in any case.
 * Keys without a quota (0) and requests while auth is off are not counted at all.
 */
export class InflightQuota {
  readonly #maxAgeMs: number;
  /** Per key: when its full quota was last looked through. */
  readonly #reconciledAt = new Map<string, number>();

  constructor(private readonly o: InflightQuotaOptions) {
    this.#maxAgeMs = o.maxAgeMs ?? 24 * 3600_000;
  }

  /** Takes a slot for the scoped task_id, or throws RATE_LIMITED. */
  async take(principal: Principal, taskId: string): Promise<QuotaSlot> {
    if (principal.open) return NOTHING_TO_RELEASE;
    const { maxInflight } = await this.o.limits.of(principal);
    if (maxInflight <= 0) return NOTHING_TO_RELEASE;
    const key = this.o.keys.inflightOf(principal.keyId);
    let taken = await this.#take(key, taskId, maxInflight);
    if (taken === 'full' && this.#mayReconcile(key) && (await this.reconcile(key)) > 0) {
      taken = await this.#take(key, taskId, maxInflight);
    }
    if (taken === 'full') {
      // Answered with Retry-After: 1 (the error handler's, for every 429).
      throw httpError(
        'RATE_LIMITED',
        `this key has ${maxInflight} tasks in flight, its quota: submit again once one ends`,
      );
    }
    if (taken === 'held') return NOTHING_TO_RELEASE;
    return { release: () => this.#release(key, taskId) };
  }

  /** Drops the tasks of a key's set that ended; returns how many. */
  async reconcile(key: string): Promise<number> {
    const { redis, keys } = this.o;
    const ids = await redis.zrange(key, 0, RECONCILE_MAX - 1);
    if (ids.length === 0) return 0;
    const pipeline = slotPipeline(redis);
    for (const id of ids)
      pipeline.add(keys.task(id), (p) => p.hget(keys.task(id), TaskRecordField.status));
    const rows = await pipeline.exec();
    const ended = ids.filter((_, i) => {
      const [err, stored] = rows[i] ?? [null, null];
      if (err) return false;
      const status = decodeTaskField('status', stored as string | null);
      // Unknown (expired) or final: the task holds no slot any more.
      return status === undefined || ENDED.has(status);
    });
    if (ended.length > 0) await redis.zrem(key, ...ended);
    return ended.length;
  }

  #mayReconcile(key: string): boolean {
    const now = Date.now();
    if (now - (this.#reconciledAt.get(key) ?? 0) < RECONCILE_EVERY_MS) return false;
    if (this.#reconciledAt.size >= 10_000) this.#reconciledAt.clear();
    this.#reconciledAt.set(key, now);
    return true;
  }

  async #take(key: string, taskId: string, max: number): Promise<InflightTakeReply> {
    const now = Date.now();
    return inflightTakeScript.run(this.o.redis, {
      keys: { inflight: key },
      args: { taskId, now, max, pruneBefore: now - this.#maxAgeMs, ttlMs: this.#maxAgeMs },
    });
  }

  async #release(key: string, taskId: string): Promise<void> {
    await this.o.redis.zrem(key, taskId);
  }
}
