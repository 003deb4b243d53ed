import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpError } from '../errors.ts';
import {
  countAuthFailure,
  refuseLimitedAddress,
  type AuthFailureLimiter,
} from './failure-limiter.ts';
import {
  ANONYMOUS_PRINCIPAL,
  DEFAULT_ROLES,
  OPEN_PRINCIPAL,
  type Principal,
  type Role,
} from './principal.ts';

/**
 * How a route is authenticated (its fastify `config.auth`):
 * - `key` (the default): an API key in `Authorization: Bearer <key>`, of a role in `config.roles`;
 * - `public`: nothing (health, liveness, metrics, docs);
 * - `agent-token`: the agent's own token from its register reply, which the route checks itself.
 */
export type RouteAuth = 'key' | 'public' | 'agent-token';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How the route is authenticated. @default 'key' */
    auth?: RouteAuth;
    /**
     * Roles whose keys may call a `key` route; another role gets 403.
     * @default caller, operator and agent (`DEFAULT_ROLES`): a relay key only where named
     */
    roles?: readonly Role[];
  }
}

/** The cookie the console's login sets (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'reach_key';

/**
 * The header the console's own writes carry beside the cookie (value `1`). A page of another
 * origin cannot send it without a CORS preflight, which no service here answers.
 */
export const CONSOLE_WRITE_HEADER = 'x-reach-console';

/** Checks a presented key: its principal, or undefined when it is not valid now. */
export interface KeyVerifier {
  verify(presented: string): Promise<Principal | undefined>;
}

/** Settings of {@link installAuth}. */
export interface AuthHookOptions {
  /** False while auth is open (loopback): every request is {@link OPEN_PRINCIPAL}. */
  required: boolean;
  verifier: KeyVerifier;
  /** URL prefixes that are public whatever their config says (docs pages added by plugins). */
  publicPrefixes?: readonly string[];
  /**
   * Failed authentications per client address (keys required only): an address over its limit
   * gets 429 AUTH_FAILURES on every `key` and `agent-token` route before its key is looked at.
   */
  failures?: AuthFailureLimiter;
}

const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

/**
 * The key a request presents: the bearer token, else the console's session cookie on a read
 * (GET/HEAD), or on a write that carries {@link CONSOLE_WRITE_HEADER}. The cookie is
 * SameSite=Strict and a write needs the header too, so another site cannot act with it.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') return BEARER.exec(header.trim())?.[1] ?? '';
  const read = request.method === 'GET' || request.method === 'HEAD';
  if (!read && request.headers[CONSOLE_WRITE_HEADER] !== '1') return undefined;
  const cookies = (request as { cookies?: Record<string, string | undefined> }).cookies;
  return cookies?.[SESSION_COOKIE] || undefined;
}

function isPublic(request: FastifyRequest, prefixes: readonly string[]): boolean {
  const url = request.routeOptions.url;
  return url !== undefined && prefixes.some((p) => url === p || url.startsWith(`${p}/`));
}

/**
 * Installs the auth hook on a service's root instance (before its routes): sets
 * `request.principal` on every `key` route, or answers 401 UNAUTHORIZED (no key, or not a valid
 * one; keys are read from the header only, never the query string) or 403 FORBIDDEN (a role the
 * route does not take). Runs at `onRequest`, before the body is read. On `public` and
 * `agent-token` routes it sets {@link ANONYMOUS_PRINCIPAL} while auth is required.
 */
export function installAuth(app: FastifyInstance, opts: AuthHookOptions): void {
  app.decorateRequest('principal', undefined);
  app.decorate('authFailures', opts.required ? opts.failures : undefined);
  if (opts.required && opts.failures) {
    // Every 401 is a failed authentication of its client address, whoever answered it: this hook,
    // an agent-token route (a wrong token) or the console's login (a wrong key in the body).
    // Synchronous on every other reply: no promise per request.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode !== 401) {
        done(null, payload);
        return;
      }
      void countAuthFailure(request).then(() => done(null, payload));
    });
  }
  // The OpenAPI document says how each route is authenticated (schemes in registerApiDocs).
  app.addHook('onRoute', (route) => {
    if (!route.schema || route.schema.hide === true) return;
    const auth = route.config?.auth ?? 'key';
    const security =
      auth === 'public' ? [] : auth === 'agent-token' ? [{ agentToken: [] }] : [{ apiKey: [] }];
    route.schema = { ...route.schema, security };
  });
  if (!opts.required) {
    // Synchronous: an async hook costs a promise and a microtask on every request.
    app.addHook('onRequest', (request, _reply, done) => {
      request.principal = OPEN_PRINCIPAL;
      done();
    });
    return;
  }
  const prefixes = opts.publicPrefixes ?? ['/docs'];
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config;
    const auth = config.auth ?? 'key';
    if (auth !== 'key' || isPublic(request, prefixes)) {
      request.principal = ANONYMOUS_PRINCIPAL;
      // An agent token is checked by its route, which counts a wrong one.
      if (auth === 'agent-token') refuseLimitedAddress(request, reply);
      return;
    }
    refuseLimitedAddress(request, reply);
    const presented = presentedKey(request);
    const principal = presented ? await opts.verifier.verify(presented) : undefined;
    if (!principal) {
      void reply.header('www-authenticate', 'Bearer');
      throw httpError(
        'UNAUTHORIZED',
        presented === undefined
          ? 'this endpoint needs an API key: send Authorization: Bearer <key>'
          : 'the API key is not valid (unknown, revoked or expired)',
      );
    }
    const roles = config.roles ?? DEFAULT_ROLES;
    if (!roles.includes(principal.role)) {
      throw httpError(
        'FORBIDDEN',
        `a key of role ${principal.role} may not call this endpoint (roles: ${roles.join(', ')})`,
      );
    }
    request.principal = principal;
  });
}
