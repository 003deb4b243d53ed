import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import type { KeyLimits } from '../quotas/key-limits.ts';

/** What the request-rate quota needs. */
export interface RateLimitDeps {
  redis: RedisClient;
  keys: ReachKeys;
  limits: KeyLimits;
  /** True while auth is off (loopback): requests are counted per client address. */
  open: boolean;
}

/**
 * Requests per second per API key, across every router (docs/SECURITY.md, Quotas):
 * `@fastify/rate-limit` with its Redis store under `keys.rateLimitPrefix()`, one counter per key
 * and second for all of the key's routes. The quota is the key record's `rate_per_s`, else
 * `REACH_KEY_RATE_PER_S` (0 = unlimited: such a key is not counted). While auth is off every
 * request is the open principal, so the default quota is applied per client address instead; with
 * no default quota then the plugin is not installed at all and costs nothing. Public routes
 * (health, metrics, docs) are never counted. Over the quota: 429 RATE_LIMITED with Retry-After.
 *
 * Registered on the root instance before the routes (it adds its hook to each route as it is
 * declared), and run at `preParsing`: after the auth hook has named the key, before a body is read.
 */
export async function registerRateLimit(app: FastifyInstance, deps: RateLimitDeps): Promise<void> {
  if (deps.open && deps.limits.defaults.ratePerS <= 0) return;
  const quotaOf = new WeakMap<FastifyRequest, number>();
  await app.register(fastifyRateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: 1000,
    redis: deps.redis,
    nameSpace: deps.keys.rateLimitPrefix(),
    // Redis unreachable: the request goes on and meets the same outage in its own step (503).
    skipOnError: true,
    keyGenerator: (request) => {
      const principal = principalOf(request);
      return principal.open ? `ip:${request.ip}` : `key:${principal.keyId}`;
    },
    allowList: async (request) => {
      const auth = request.routeOptions.config.auth ?? 'key';
      if (auth !== 'key') return true;
      const { ratePerS } = await deps.limits.of(principalOf(request));
      if (ratePerS <= 0) return true;
      quotaOf.set(request, ratePerS);
      return false;
    },
    max: (request) => quotaOf.get(request) ?? 0,
    // The quota's headers only on a refusal: three more headers on every reply cost for nothing.
    addHeadersOnExceeding: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
    },
    errorResponseBuilder: (_request, context) =>
      httpError(
        'RATE_LIMITED',
        `this key is over its quota of ${context.max} requests per second; retry in ${context.after}`,
      ),
  });
}
