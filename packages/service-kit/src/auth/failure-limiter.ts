import type { FastifyRequest } from 'fastify';
import { httpError } from '../errors.ts';
import type { EdgeSettings } from '../host-guard.ts';

/** The part of a Redis connection the limiter uses: one MULTI per failure. */
export interface FailureCounterStore {
  multi(): {
    incr(key: string): unknown;
    pexpire(key: string, ms: number, mode: 'NX'): unknown;
    pttl(key: string): unknown;
    exec(): Promise<[Error | null, unknown][] | null>;
  };
}

/** Settings of an {@link AuthFailureLimiter}. */
export interface AuthFailureLimiterOptions {
  redis: FailureCounterStore;
  /** The Redis key counting one address's failures (`keys.authFailures(address)`). */
  keyOf: (address: string) => string;
  /** Failures an address may make per window; the next request needing a key gets 429. */
  limit: number;
  windowMs: number;
  /** @default Date.now */
  now?: () => number;
}

/** Addresses past which limited ones that have served their time are forgotten in a sweep. */
const SWEEP_AT = 10_000;

/**
 * Failed authentications per client address, counted in Redis so that every router and
 * registry-sync share them (docs/SECURITY.md, Key guessing). Only failures reach Redis: one
 * `MULTI` (`INCR`, `PEXPIRE NX`, `PTTL`) each. Once an address has made `limit` failures in a
 * window, the process that counted the last one holds it in memory until the window ends, and
 * answers every request of it that needs a key with 429 before the key is looked at, at no cost
 * to Redis. Another process learns of the limit at its first failure from that address, so a
 * burst of guesses costs Redis about `limit` + one command per process, whatever its size.
 */
export class AuthFailureLimiter {
  private readonly limitedUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: AuthFailureLimiterOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Seconds `address` must wait while it is limited; undefined when it is not. No I/O. */
  retryAfterS(address: string): number | undefined {
    const until = this.limitedUntil.get(address);
    if (until === undefined) return undefined;
    const left = until - this.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.limitedUntil.delete(address);
    return undefined;
  }

  /**
   * Counts a failed authentication of `address`; past the limit, holds it. A store that does not
   * answer leaves the failure uncounted: the request's own 401 stands, and a store outage is not
   * turned into a lock-out.
   */
  async failed(address: string): Promise<void> {
    const key = this.o.keyOf(address);
    let replies: [Error | null, unknown][] | null;
    try {
      const tx = this.o.redis.multi();
      tx.incr(key);
      tx.pexpire(key, this.o.windowMs, 'NX');
      tx.pttl(key);
      replies = await tx.exec();
    } catch {
      return;
    }
    const count = Number(replies?.[0]?.[1]);
    const ttl = Number(replies?.[2]?.[1]);
    if (!(count >= this.o.limit)) return;
    if (this.limitedUntil.size >= SWEEP_AT) this.sweep();
    this.limitedUntil.set(address, this.now() + (ttl > 0 ? ttl : this.o.windowMs));
  }

  private sweep(): void {
    const now = this.now();
    for (const [address, until] of this.limitedUntil)
      if (until <= now) this.limitedUntil.delete(address);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts failed authentications per client address; undefined while auth is open. */
    authFailures: AuthFailureLimiter | undefined;
  }
}

/**
 * Refuses a request from an address over its failed-authentication limit: 429 AUTH_FAILURES with
 * `Retry-After`. Costs a map lookup; nothing when no limiter is installed (auth open).
 */
export function refuseLimitedAddress(
  request: FastifyRequest,
  reply: { header(k: string, v: string): unknown },
): void {
  const wait = request.server.authFailures?.retryAfterS(request.ip);
  if (wait === undefined) return;
  reply.header('retry-after', String(wait));
  throw httpError(
    'AUTH_FAILURES',
    `too many failed authentications from this address; retry in ${wait} s`,
  );
}

/** Counts a failed authentication of the request's client address (no-op while auth is open). */
export async function countAuthFailure(request: FastifyRequest): Promise<void> {
  await request.server.authFailures?.failed(request.ip);
}

/** The settings both services read for their edges (shared.ts rows). */
export interface EdgeOptions {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  trustedProxies: readonly string[];
  authFailureLimit: number;
  authFailureWindowS: number;
}

/**
 * A service's edge guards from its settings: the failed-authentication limiter on its Redis
 * (`keys.authFailures`), and the hosts, origins and proxies its app answers and trusts.
 */
export function edgeGuardsFrom(
  options: EdgeOptions,
  redis: FailureCounterStore,
  keys: { authFailures(address: string): string },
): { failures: AuthFailureLimiter; edge: EdgeSettings } {
  return {
    failures: new AuthFailureLimiter({
      redis,
      keyOf: (address) => keys.authFailures(address),
      limit: options.authFailureLimit,
      windowMs: options.authFailureWindowS * 1000,
    }),
    edge: {
      allowedHosts: options.allowedHosts,
      allowedOrigins: options.allowedOrigins,
      trustedProxies: options.trustedProxies,
    },
  };
}
