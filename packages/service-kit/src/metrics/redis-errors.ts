import { Counter, type Registry } from 'prom-client';

/** Something that reports connection errors as `error` events: an ioredis client or Cluster. */
export interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Counts the `error` events of a service's main Redis connection in `reach_redis_errors_total`:
 * connections refused, reset or timed out while (re)connecting, and a Cluster client's errors.
 * Commands that fail while the connection is away answer `503 STORE_UNAVAILABLE` and are counted
 * by the HTTP metrics instead. Adds a listener; never changes how the client reconnects.
 */
export function registerRedisErrorCounter(registry: Registry, client: ErrorEmitter): void {
  const errors = new Counter({
    name: 'reach_redis_errors_total',
    help: "Errors reported by this instance's main Redis connection (refused, reset or timed-out connections)",
    registers: [registry],
  });
  client.on('error', () => errors.inc());
}
