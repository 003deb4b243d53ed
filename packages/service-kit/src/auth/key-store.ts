import type { RedisClient } from '../redis-connection.ts';
import { slotPipeline } from '../slot-pipeline.ts';
import { DEFAULT_TENANT, type ReachKeys } from '@agent-reach/protocol';
import { newApiKey, parseApiKey, sameDigest, sha256Hex } from './key-format.ts';
import { ROLES, type Principal, type Role } from './principal.ts';

/** An API key as the store keeps it: everything but the secret, whose hash only is stored. */
export interface ApiKeyRecord {
  readonly keyId: string;
  readonly tenant: string;
  readonly role: Role;
  /** Capabilities the key may submit to or serve; `['*']` for any. */
  readonly capabilities: readonly string[];
  readonly label: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms after which the key is refused; null for never. */
  readonly expiresAt: number | null;
  /** Requests per second across every router; null: the router's default (REACH_KEY_RATE_PER_S). */
  readonly ratePerS: number | null;
  /** Tasks in flight; null: the router's default (REACH_KEY_MAX_INFLIGHT). */
  readonly maxInflight: number | null;
}

/** What `create` needs; the rest has defaults. */
export interface NewApiKey {
  tenant: string;
  role: Role;
  /** @default ['*'] */
  capabilities?: readonly string[];
  /** @default '' */
  label?: string;
  /** Epoch ms; null or absent for a key that never expires. */
  expiresAt?: number | null;
  /** Requests per second (0 = unlimited); null or absent for the router's default. */
  ratePerS?: number | null;
  /** Tasks in flight (0 = unlimited); null or absent for the router's default. */
  maxInflight?: number | null;
}

/** Settings of an {@link ApiKeyStore}. */
export interface ApiKeyStoreOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** `REACH_ADMIN_KEY`: the bootstrap operator key of the default tenant; only its hash is kept. */
  adminKey?: string;
  /**
   * How long a key's record read from Redis is trusted without reading it again. With the
   * revocation notice (`listen`) a revoked key is refused at once; without it, within this long.
   * @default 500
   */
  cacheMs?: number;
  /** Largest number of records cached. @default 10000 */
  cacheSize?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
}

/** The principal of `REACH_ADMIN_KEY`. */
export const ADMIN_PRINCIPAL: Principal = Object.freeze({
  keyId: 'admin',
  tenant: DEFAULT_TENANT,
  role: 'operator',
  capabilities: Object.freeze(['*']),
  open: false,
});

const Field = {
  secretHash: 'secret_hash',
  tenant: 'tenant',
  role: 'role',
  capabilities: 'capabilities',
  label: 'label',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
  // Quotas, read by the router's rate limit and in-flight quota (apps/router/src/quotas).
  ratePerS: 'rate_per_s',
  maxInflight: 'max_inflight',
} as const;

/** A stored quota: a whole number, or null when the field is unset. */
function quotaField(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/** A stored key as verification needs it; the principal is made once per read. */
interface StoredKey {
  record: ApiKeyRecord;
  secretHash: string;
  principal: Principal;
}

interface Cached {
  /** null: no such key (cached as well, so a flood of unknown ids costs no Redis reads). */
  entry: StoredKey | null;
  readAt: number;
}

function decode(keyId: string, hash: Record<string, string>): StoredKey | null {
  const secretHash = hash[Field.secretHash];
  const role = hash[Field.role] as Role | undefined;
  const tenant = hash[Field.tenant];
  if (!secretHash || !tenant || !role || !ROLES.includes(role)) return null;
  let capabilities: string[] = [];
  try {
    const parsed: unknown = JSON.parse(hash[Field.capabilities] ?? '[]');
    if (Array.isArray(parsed)) capabilities = parsed.filter((c) => typeof c === 'string');
  } catch {
    capabilities = [];
  }
  const expires = hash[Field.expiresAt];
  const record: ApiKeyRecord = Object.freeze({
    keyId,
    tenant,
    role,
    capabilities: Object.freeze(capabilities),
    label: hash[Field.label] ?? '',
    createdAt: Number(hash[Field.createdAt] ?? 0),
    expiresAt: expires ? Number(expires) : null,
    ratePerS: quotaField(hash[Field.ratePerS]),
    maxInflight: quotaField(hash[Field.maxInflight]),
  });
  const principal: Principal = Object.freeze({
    keyId,
    tenant,
    role,
    capabilities: record.capabilities,
    open: false,
  });
  return { record, secretHash, principal };
}

/**
 * API keys in Redis (docs/SECURITY.md): a hash per key (`keys.apiKey(id)`) holding the SHA-256
 * of its secret and what it may do, the ids in the set `keys.apiKeys()`. Verified keys are cached
 * for `cacheMs` at most, and a revocation is announced on `keys.apiKeysChannel()` so that every
 * process listening drops the key at once.
 */
export class ApiKeyStore {
  private readonly redis: RedisClient;
  private readonly keys: ReachKeys;
  private readonly adminHash: string | undefined;
  private readonly cacheMs: number;
  private readonly cacheSize: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, Cached>();

  constructor(opts: ApiKeyStoreOptions) {
    this.redis = opts.redis;
    this.keys = opts.keys;
    this.adminHash = opts.adminKey ? sha256Hex(opts.adminKey) : undefined;
    this.cacheMs = opts.cacheMs ?? 500;
    this.cacheSize = opts.cacheSize ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Makes a key; the reply's `key` is the only copy of the secret. */
  async create(input: NewApiKey): Promise<{ record: ApiKeyRecord; key: string }> {
    const issued = newApiKey();
    const record: ApiKeyRecord = Object.freeze({
      keyId: issued.keyId,
      tenant: input.tenant,
      role: input.role,
      capabilities: Object.freeze([...(input.capabilities ?? ['*'])]),
      label: input.label ?? '',
      createdAt: this.now(),
      expiresAt: input.expiresAt ?? null,
      ratePerS: input.ratePerS ?? null,
      maxInflight: input.maxInflight ?? null,
    });
    // The record, then the set of ids: they lie in different slots (one MULTI cannot hold both
    // on a Cluster). A record not in the set yet is usable, only not listed.
    const key = this.keys.apiKey(record.keyId);
    const replies = await slotPipeline(this.redis)
      .add(key, (p) =>
        p.hset(key, {
          [Field.secretHash]: issued.secretHash,
          [Field.tenant]: record.tenant,
          [Field.role]: record.role,
          [Field.capabilities]: JSON.stringify(record.capabilities),
          [Field.label]: record.label,
          [Field.createdAt]: String(record.createdAt),
          [Field.expiresAt]: record.expiresAt === null ? '' : String(record.expiresAt),
          [Field.ratePerS]: record.ratePerS === null ? '' : String(record.ratePerS),
          [Field.maxInflight]: record.maxInflight === null ? '' : String(record.maxInflight),
        }),
      )
      .add(this.keys.apiKeys(), (p) => p.sadd(this.keys.apiKeys(), record.keyId))
      // Drops a cached "no such key" in every process.
      .add(key, (p) => p.publish(this.keys.apiKeysChannel(), record.keyId))
      .exec();
    const failed = replies.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    this.cache.delete(record.keyId);
    return { record, key: issued.key };
  }

  /** Every key, without secrets, oldest first. */
  async list(): Promise<ApiKeyRecord[]> {
    const ids = await this.redis.smembers(this.keys.apiKeys());
    if (ids.length === 0) return [];
    const pipeline = slotPipeline(this.redis);
    for (const id of ids)
      pipeline.add(this.keys.apiKey(id), (p) => p.hgetall(this.keys.apiKey(id)));
    const replies = await pipeline.exec();
    const out: ApiKeyRecord[] = [];
    ids.forEach((id, i) => {
      const hash = replies[i]?.[1] as Record<string, string> | undefined;
      const entry = hash ? decode(id, hash) : null;
      if (entry) out.push(entry.record);
    });
    return out.sort((a, b) => a.createdAt - b.createdAt || a.keyId.localeCompare(b.keyId));
  }

  /** Deletes a key and tells every process; false when there was none. */
  async revoke(keyId: string): Promise<boolean> {
    // Record first (then the key no longer works anywhere), then the set; different slots.
    const key = this.keys.apiKey(keyId);
    const replies = await slotPipeline(this.redis)
      .add(key, (p) => p.del(key))
      .add(this.keys.apiKeys(), (p) => p.srem(this.keys.apiKeys(), keyId))
      .add(key, (p) => p.publish(this.keys.apiKeysChannel(), keyId))
      .exec();
    this.cache.delete(keyId);
    const deleted = replies?.[0]?.[1];
    return typeof deleted === 'number' && deleted > 0;
  }

  /**
   * The principal of a presented key, or undefined when it is unknown, revoked, expired or
   * wrong. `REACH_ADMIN_KEY` is the operator of the default tenant.
   */
  async verify(presented: string): Promise<Principal | undefined> {
    const parsed = parseApiKey(presented);
    const entry = parsed ? await this.lookup(parsed.keyId) : null;
    if (parsed && entry && sameDigest(sha256Hex(parsed.secret), entry.secretHash)) {
      const { expiresAt } = entry.record;
      return expiresAt !== null && expiresAt <= this.now() ? undefined : entry.principal;
    }
    // Not a stored key: the admin key, whatever its shape (only its hash is kept).
    if (this.adminHash !== undefined && sameDigest(sha256Hex(presented), this.adminHash))
      return ADMIN_PRINCIPAL;
    return undefined;
  }

  /**
   * Drops cached keys as soon as a revocation is announced on `subscriber` (a connection in
   * subscriber mode, which may serve other channels too).
   */
  async listen(subscriber: RedisClient): Promise<void> {
    const channel = this.keys.apiKeysChannel();
    subscriber.on('message', (from: string, keyId: string) => {
      if (from === channel) this.cache.delete(keyId);
    });
    await subscriber.subscribe(channel);
  }

  private async lookup(keyId: string): Promise<Cached['entry']> {
    const now = this.now();
    const cached = this.cache.get(keyId);
    if (cached && now - cached.readAt < this.cacheMs) return cached.entry;
    const hash = await this.redis.hgetall(this.keys.apiKey(keyId));
    const entry = decode(keyId, hash);
    if (this.cache.size >= this.cacheSize) {
      // Oldest first (insertion order): enough for a cache this short-lived.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.delete(keyId);
    this.cache.set(keyId, { entry, readAt: now });
    return entry;
  }
}
