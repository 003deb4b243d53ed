import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeTenantRecord,
  isValidTenant,
  TenantField,
  type ReachKeys,
  type TenantUpdate,
  type TenantView,
} from '@agent-reach/protocol';

/** Where tenant records live, and how long a read one is used. */
export interface TenantRecordsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /**
   * How long a tenant's record read from Redis is used before it is read again: a record changed
   * through another router holds here within that time. @default 1000
   */
  cacheMs?: number;
  /** Largest number of tenants cached; past it the cache starts over. @default 10000 */
  cacheSize?: number;
  /** The clock of `updated_at` and of the cache (tests). @default Date.now */
  now?: () => number;
}

interface Cached {
  view: TenantView;
  readAt: number;
}

/** The hash fields of an update, as stored. */
function fieldsOf(update: TenantUpdate): Record<string, string> {
  const fields: Record<string, string> = {};
  if (update.weight !== undefined) fields[TenantField.weight] = String(update.weight);
  if (update.max_queued !== undefined) fields[TenantField.maxQueued] = String(update.max_queued);
  if (update.max_inflight !== undefined)
    fields[TenantField.maxInflight] = String(update.max_inflight);
  if (update.max_fairness_weight !== undefined)
    fields[TenantField.maxFairnessWeight] = String(update.max_fairness_weight);
  return fields;
}

/**
 * Tenant records (docs/SECURITY.md, Tenants): a hash per tenant (`keys.tenant(tenant)`) and the
 * set of tenants that have one (`keys.tenants()`), both under the `{tenants}` hash tag. `get` is
 * on the submit path: a tenant's record is read at most once per `cacheMs` per process (a burst
 * on a cold cache shares one read), so a submission costs no Redis command for it.
 */
export class TenantRecords {
  readonly #cache = new Map<string, Cached>();
  /** Reads out, by tenant: a burst of gets on a cold cache shares one. */
  readonly #reading = new Map<string, { seq: number; view: Promise<TenantView> }>();
  #reads = 0;
  readonly #cacheMs: number;
  readonly #cacheSize: number;
  readonly #now: () => number;

  constructor(private readonly o: TenantRecordsOptions) {
    this.#cacheMs = o.cacheMs ?? 1000;
    this.#cacheSize = o.cacheSize ?? 10_000;
    this.#now = o.now ?? Date.now;
  }

  /**
   * A tenant's record, or the defaults when it has none (weight 1, max_queued 0, max_inflight 0,
   * max_fairness_weight 10, updated_at 0).
   * @throws TypeError when `tenant` is not a valid tenant name (TENANT_PATTERN).
   */
  async get(tenant: string): Promise<TenantView> {
    const key = this.o.keys.tenant(tenant);
    const hit = this.#cache.get(tenant);
    if (hit && this.#now() - hit.readAt < this.#cacheMs) return hit.view;
    const pending = this.#reading.get(tenant);
    if (pending) return pending.view;
    const seq = ++this.#reads;
    const view = this.#read(tenant, key, seq);
    this.#reading.set(tenant, { seq, view });
    return view;
  }

  async #read(tenant: string, key: string, seq: number): Promise<TenantView> {
    const startedAt = this.#now();
    try {
      const view = decodeTenantRecord(tenant, await this.o.redis.hgetall(key));
      // A put() while this read was out cached a newer record: keep that one.
      const newer = this.#cache.get(tenant);
      return newer && newer.readAt >= startedAt ? newer.view : this.#remember(view);
    } finally {
      if (this.#reading.get(tenant)?.seq === seq) this.#reading.delete(tenant);
    }
  }

  /**
   * Changes the fields `update` gives, the others keeping their values, stamps `updated_at` and
   * lists the tenant, in one MULTI; this process sees the new record at once, others within
   * `cacheMs`.
   * @throws TypeError when `tenant` is not a valid tenant name.
   */
  async put(tenant: string, update: TenantUpdate): Promise<TenantView> {
    const key = this.o.keys.tenant(tenant);
    const fields = { ...fieldsOf(update), [TenantField.updatedAt]: String(this.#now()) };
    const replies = await this.o.redis
      .multi()
      .hset(key, fields)
      .sadd(this.o.keys.tenants(), tenant)
      .hgetall(key)
      .exec();
    const failed = replies?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    if (!replies) throw new Error(`the update of tenant ${tenant} was discarded`);
    const hash = (replies[2]?.[1] ?? {}) as Record<string, string>;
    this.#reading.delete(tenant);
    return this.#remember(decodeTenantRecord(tenant, hash));
  }

  /** Every tenant with a record, by name. */
  async list(): Promise<TenantView[]> {
    // A name that is no tenant's (a set edited by hand) names no record.
    const names = (await this.o.redis.smembers(this.o.keys.tenants())).filter(isValidTenant).sort();
    if (names.length === 0) return [];
    // One slot ({tenants}): one pipeline, on a Cluster too.
    const pipeline = this.o.redis.pipeline();
    for (const name of names) pipeline.hgetall(this.o.keys.tenant(name));
    const replies = (await pipeline.exec()) ?? [];
    return names.map((name, i) => {
      const [err, hash] = replies[i] ?? [null, {}];
      if (err) throw err;
      return this.#remember(decodeTenantRecord(name, hash as Record<string, string>));
    });
  }

  #remember(fresh: TenantView): TenantView {
    // Shared by every caller until the next read: nobody may change it.
    const view = Object.freeze(fresh);
    if (this.#cache.size >= this.#cacheSize && !this.#cache.has(view.tenant)) this.#cache.clear();
    this.#cache.set(view.tenant, { view, readAt: this.#now() });
    return view;
  }
}
