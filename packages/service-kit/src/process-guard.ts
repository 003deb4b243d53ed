import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { currentRequestContext, recentRequests, type RequestContext } from './request-context.ts';

// One counter for the process: every service registry shows it (with its `service` label), and
// a rejection before any registry exists is counted all the same.
const unhandledRejections = new Counter({
  name: 'reach_unhandled_rejections_total',
  help: 'Promise rejections nobody handled since this process started; each was logged at error with its request, and the process served on',
  registers: [],
});

/** Adds the process guard's counter (`reach_unhandled_rejections_total`) to a service registry. */
export function registerProcessGuardMetrics(registry: Registry): void {
  registry.registerMetric(unhandledRejections);
}

/** A request as a failure's line names it: ids and the route template, never headers or a body. */
function described(c: RequestContext): Record<string, string> {
  return {
    reqId: c.reqId,
    method: c.method,
    route: c.route,
    ...(c.keyId === undefined ? {} : { key_id: c.keyId }),
  };
}

/**
 * The log fields naming the request a failure came from: its own (`reqId`, `method`, `route`,
 * `key_id`) in the `exact` mode, else `recent_requests`, those it may have come from (in flight
 * or just answered, newest first; `in_flight` tells which); none outside any request.
 */
export function requestLogFields(): Record<string, unknown> {
  const context = currentRequestContext();
  if (context) return described(context);
  const now = performance.now();
  const candidates = recentRequests(now);
  if (candidates.length === 0) return {};
  return {
    recent_requests: candidates.map((c) => ({
      ...described(c),
      in_flight: c.endedAt === undefined,
    })),
  };
}

/** Options of {@link installProcessGuard}. */
export interface ProcessGuardOptions {
  logger: Logger;
  /**
   * Called once the `fatal` line of an uncaught exception is written: close with a bound and
   * exit non-zero. Called again for each further one, while closing.
   */
  onUncaughtException: () => void;
}

/**
 * What the process does with an error nothing caught (docs/OPERATIONS.md, "Crashes"):
 *
 * - an unhandled rejection is logged at `error` with the request it came from, counted in
 *   `reach_unhandled_rejections_total`, and the process serves on — a rejected promise nobody
 *   awaited has left no synchronous code half-run, and exiting would let one bad request stop
 *   the service for every caller;
 * - an uncaught exception (a synchronous throw outside any handler: state may be half-written)
 *   is logged at `fatal` with its request, then `onUncaughtException` closes and exits.
 *
 * Node runs both listeners in the async context of the failure, so in the `exact` mode the
 * request is known ({@link currentRequestContext}); in the default `recent` mode the line names
 * the requests it may have come from. Install once per process, before the service starts.
 */
export function installProcessGuard(opts: ProcessGuardOptions): void {
  const log = opts.logger.child({ module: 'process-guard' });
  process.on('unhandledRejection', (reason: unknown) => {
    unhandledRejections.inc();
    try {
      log.error({ err: reason, ...requestLogFields() }, 'unhandled promise rejection; serving on');
    } catch {
      // A reason that cannot even be logged must not turn into an uncaught exception.
    }
  });
  process.on('uncaughtException', (err: Error, origin: NodeJS.UncaughtExceptionOrigin) => {
    try {
      log.fatal({ err, origin, ...requestLogFields() }, 'uncaught exception; closing and exiting');
    } finally {
      opts.onUncaughtException();
    }
  });
}
