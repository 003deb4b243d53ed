import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '@agent-reach/protocol';
import { isLoopbackHost } from './auth/auth-mode.ts';

/** Settings of {@link installHostGuard}. */
export interface HostGuardOptions {
  /**
   * True while the service serves without keys (auth off, loopback only): a request must name a
   * loopback `Host`, and a loopback `Origin` when it sends one.
   */
  open: boolean;
  /** With keys required: the host names a request may name in `Host` (empty: any). */
  allowedHosts: readonly string[];
  /** With keys required: browser origins (`scheme://host[:port]`) besides the service's own. */
  allowedOrigins: readonly string[];
}

/**
 * The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), lower-case, without
 * brackets or port; undefined for a value that is not a host.
 */
export function hostNameOf(value: string): string | undefined {
  const h = value.trim().toLowerCase();
  if (h === '') return undefined;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 1 ? h.slice(1, end) : undefined;
  }
  const colon = h.indexOf(':');
  // More than one colon without brackets: a bare IPv6 address, which a Host header never is.
  if (colon >= 0 && h.indexOf(':', colon + 1) >= 0) return undefined;
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** The host name of an `Origin` header (`null` and anything not a URL: undefined). */
function originHostOf(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.hostname.replace(/^\[|\]$/g, '').toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/** An origin as allow lists name it: `scheme://host[:port]`, lower-case, no trailing slash. */
function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/** Why a request was refused, or undefined when it may go on. */
export type HostRefusal = { code: ErrorCode; message: string } | undefined;

/**
 * Decides a request's `Host` and `Origin` against the guard's settings ({@link installHostGuard}).
 * A request without `Host` (HTTP/1.0) or `Origin` (not a browser's cross-site call) has nothing to
 * check for that header.
 */
export function checkHostAndOrigin(
  host: string | undefined,
  origin: string | undefined,
  opts: HostGuardOptions,
): HostRefusal {
  const hostName = host === undefined ? undefined : hostNameOf(host);
  if (host !== undefined && host !== '') {
    const allowed = opts.open
      ? hostName !== undefined && isLoopbackHost(hostName)
      : opts.allowedHosts.length === 0 ||
        (hostName !== undefined &&
          (isLoopbackHost(hostName) || opts.allowedHosts.includes(hostName)));
    if (!allowed) {
      return {
        code: 'HOST_NOT_ALLOWED',
        message: opts.open
          ? 'this service serves without keys and answers only requests to a loopback host (localhost, 127.0.0.1, [::1]); set REACH_AUTH=required to serve other hosts'
          : 'the Host header names a host not in REACH_ALLOWED_HOSTS',
      };
    }
  }
  if (origin === undefined) return undefined;
  const originHost = originHostOf(origin);
  const allowed = opts.open
    ? originHost !== undefined && isLoopbackHost(originHost)
    : // The service's own pages (the console) call it from its own origin.
      (originHost !== undefined && originHost === hostName) ||
      opts.allowedOrigins.includes(normalOrigin(origin));
  if (allowed) return undefined;
  return {
    code: 'ORIGIN_NOT_ALLOWED',
    message: opts.open
      ? 'this service serves without keys and answers browser requests only from a loopback origin'
      : 'a browser request from another origin; list it in REACH_ALLOWED_ORIGINS to allow it',
  };
}

/**
 * Refuses, before any route runs, requests whose `Host` or `Origin` the service must not answer:
 * a page in a developer's browser that reaches a keyless local stack through a rebinding host
 * name (DNS rebinding) gets `403 HOST_NOT_ALLOWED` or `ORIGIN_NOT_ALLOWED`. Synchronous and
 * without I/O: a string check per request.
 */
export function installHostGuard(app: FastifyInstance, opts: HostGuardOptions): void {
  const settings: HostGuardOptions = {
    open: opts.open,
    allowedHosts: opts.allowedHosts.map((h) => h.toLowerCase()),
    allowedOrigins: opts.allowedOrigins.map(normalOrigin),
  };
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const origin = request.headers.origin;
    const refusal = checkHostAndOrigin(
      request.headers.host,
      typeof origin === 'string' ? origin : undefined,
      settings,
    );
    if (refusal === undefined) {
      done();
      return;
    }
    request.log.info({ code: refusal.code, host: request.headers.host, origin }, refusal.message);
    void reply
      .code(ERROR_CODES[refusal.code])
      .send({ error: refusal.code, message: refusal.message });
  });
}

/** The edge settings both services read (REACH_ALLOWED_HOSTS, REACH_ALLOWED_ORIGINS, REACH_TRUSTED_PROXIES). */
export interface EdgeSettings {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** Peers whose `X-Forwarded-For` names the client; none: the socket's address is the client. */
  trustedProxies: readonly string[];
}

/** Fastify's `trustProxy` option for `edge`: only the listed proxies, or none. */
export function trustProxyOption(edge: EdgeSettings | undefined): { trustProxy?: string[] } {
  return edge && edge.trustedProxies.length > 0 ? { trustProxy: [...edge.trustedProxies] } : {};
}
