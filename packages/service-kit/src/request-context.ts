import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
// `request.principal`, which the auth hook sets.
import type {} from './auth/principal.ts';
import { routeLabel } from './metrics/http.ts';

/**
 * The request a piece of work was started for, as a process-level error handler may log it:
 * ids and the route template only, never headers, the URL or a body (keys, tokens and payloads
 * travel in them).
 */
export interface RequestContext {
  /** Fastify's request id: the `reqId` of the request's own log lines. */
  readonly reqId: string;
  readonly method: string;
  /** The route template (`/a2a/:capability`), `unmatched` for a 404. */
  readonly route: string;
  /** The id of the caller's API key once auth has named it (`open` while auth is off). */
  keyId: string | undefined;
  /** performance.now() when it came in, and when it was answered. */
  readonly startedAt: number;
  endedAt: number | undefined;
}

/**
 * How a failure is tied to the request it came from (`REACH_REQUEST_CONTEXT`, read by
 * `runMain`):
 *
 * - `recent` (the default): the process keeps its last {@link RECENT_KEPT} requests; a failure is
 *   logged with those in flight or answered in the last {@link RECENT_MS} ms (`recent_requests`,
 *   newest first): the one it came from is among them. Costs an array slot per request.
 * - `exact`: every request runs in an AsyncLocalStorage context, and a failure is logged with
 *   its own request (`reqId`, `method`, `route`, `key_id`). On Node 20 AsyncLocalStorage makes
 *   every promise of the process carry the context: the router's CPU per task about 10–20 %
 *   higher in the bench (December 2026), so it is for hunting a failure, not the default.
 */
export type RequestContextMode = 'recent' | 'exact';

/** The modes `REACH_REQUEST_CONTEXT` takes. */
export const REQUEST_CONTEXT_MODES: readonly RequestContextMode[] = ['recent', 'exact'];

/** Requests the `recent` mode keeps. */
export const RECENT_KEPT = 32;
/** How long after its answer a request is still named with a failure. */
export const RECENT_MS = 10_000;
/** Most requests one failure's line names. */
const NAMED = 8;

let mode: RequestContextMode = 'recent';
const storage = new AsyncLocalStorage<RequestContext>();
const contexts = new WeakMap<FastifyRequest, RequestContext>();
const recent: (RequestContext | undefined)[] = new Array<RequestContext | undefined>(RECENT_KEPT);
let next = 0;

/** Sets how failures are tied to requests, for the whole process (before it serves). */
export function setRequestContextMode(value: RequestContextMode): void {
  mode = value;
}

/**
 * The request whose async context the caller runs in, in the `exact` mode. Node runs
 * `unhandledRejection` and `uncaughtException` listeners in the context of the rejected promise
 * or the throwing callback, so there it names the request the failure came from.
 */
export function currentRequestContext(): RequestContext | undefined {
  return mode === 'exact' ? storage.getStore() : undefined;
}

/**
 * The requests a failure may have come from in the `recent` mode: those in flight or answered in
 * the last {@link RECENT_MS} ms, newest first, at most 8.
 */
export function recentRequests(now = performance.now()): RequestContext[] {
  const found: RequestContext[] = [];
  for (let i = 1; i <= RECENT_KEPT && found.length < NAMED; i++) {
    const c = recent[(next - i + RECENT_KEPT) % RECENT_KEPT];
    if (!c) break;
    if (c.endedAt === undefined || now - c.endedAt <= RECENT_MS) found.push(c);
  }
  return found;
}

/**
 * Keeps the {@link RequestContext} of every request of `app` (docs/OPERATIONS.md, "Crashes and
 * restarts"): in the `recent` mode in a ring of the last {@link RECENT_KEPT}, in the `exact` mode
 * also as the AsyncLocalStorage context the request runs in, so that an unhandled rejection or an
 * uncaught exception is logged with the request it came from (`runMain`). Call on the root
 * instance before any route; the key id is filled in after the auth hooks, in `preValidation`,
 * which also re-enters the context in case a body parser lost it. Synchronous hooks: an async
 * hook would cost a promise per request.
 */
export function installRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const context: RequestContext = {
      reqId: request.id,
      method: request.method,
      route: routeLabel(request),
      keyId: undefined,
      startedAt: performance.now(),
      endedAt: undefined,
    };
    contexts.set(request, context);
    recent[next] = context;
    next = (next + 1) % RECENT_KEPT;
    if (mode === 'exact') storage.run(context, done);
    else done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const context = contexts.get(request);
    if (!context) {
      done();
      return;
    }
    context.keyId = request.principal?.keyId;
    if (mode === 'exact') storage.run(context, done);
    else done();
  });
  const ended = (request: FastifyRequest, _reply: unknown, done: () => void) => {
    const context = contexts.get(request);
    if (context) context.endedAt = performance.now();
    done();
  };
  app.addHook('onResponse', ended);
  app.addHook('onRequestAbort', (request, done) => ended(request, undefined, done));
}
