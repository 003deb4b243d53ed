import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import type { Principal } from '@agent-reach/service-kit';

/** A key's quotas; 0 is unlimited. */
export interface Limits {
  /** Requests per second, across every router. */
  ratePerS: number;
  /** Tasks submitted and not yet ended, across every router. */
  maxInflight: number;
}

/** Where a key's quotas come from. */
export interface KeyLimitsOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Quotas of a key whose record sets none (`REACH_KEY_RATE_PER_S`, `REACH_KEY_MAX_INFLIGHT`). */
  defaults: Limits;
  /** How long a key's quotas read from Redis are used before they are read again. @default 1000 */
  cacheMs?: number;
  /** Largest number of keys cached. @default 10000 */
  cacheSize?: number;
}

/** The record fields of a key's quotas (`POST /v1/keys` `rate_per_s`, `max_inflight`). */
export const LIMIT_FIELDS = { ratePerS: 'rate_per_s', maxInflight: 'max_inflight' } as const;

/** A quota field as stored: a whole number ≥ 0, else the default. */
function quota(value: string | null | undefined, fallback: number): number {
  if (value === null || value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/**
 * Each key's quotas: the `rate_per_s` and `max_inflight` fields of its record, else the
 * defaults from settings. Read from Redis at most once per `cacheMs` per key and process, so a
 * changed quota holds everywhere within that time and a request costs no read. The open principal
 * (auth off) and the bootstrap admin key have no record: the defaults apply.
 */
export class KeyLimits {
  readonly #cache = new Map<string, { limits: Limits; readAt: number }>();
  readonly #cacheMs: number;
  readonly #cacheSize: number;

  constructor(private readonly o: KeyLimitsOptions) {
    this.#cacheMs = o.cacheMs ?? 1000;
    this.#cacheSize = o.cacheSize ?? 10_000;
  }

  /** The defaults from settings. */
  get defaults(): Limits {
    return this.o.defaults;
  }

  /** The quotas of the request's key. */
  async of(principal: Principal): Promise<Limits> {
    if (principal.open) return this.o.defaults;
    const now = Date.now();
    const hit = this.#cache.get(principal.keyId);
    if (hit && now - hit.readAt < this.#cacheMs) return hit.limits;
    let limits = this.o.defaults;
    try {
      const [rate, inflight] = await this.o.redis.hmget(
        this.o.keys.apiKey(principal.keyId),
        LIMIT_FIELDS.ratePerS,
        LIMIT_FIELDS.maxInflight,
      );
      limits = {
        ratePerS: quota(rate, this.o.defaults.ratePerS),
        maxInflight: quota(inflight, this.o.defaults.maxInflight),
      };
    } catch (err: unknown) {
      // A key id the key builder refuses (the admin key's) has no record: the defaults apply.
      if (!(err instanceof TypeError)) throw err;
    }
    if (this.#cache.size >= this.#cacheSize) this.#cache.clear();
    this.#cache.set(principal.keyId, { limits, readAt: now });
    return limits;
  }
}
