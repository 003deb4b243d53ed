import { SHARED_SETTINGS } from '@agent-reach/protocol';
import { isLoopbackHost } from './auth/auth-mode.ts';

/**
 * Where a service may send a request a caller named (a card to fetch, a webhook to post to, an
 * endpoint to call), so that a caller cannot aim it at any address the service reaches.
 */
export interface OutboundHosts {
  /** Host names allowed, lower case, as {@link hostListFrom} reads a `*_HOSTS` setting. */
  hosts: readonly string[];
  /**
   * Loopback hosts (`localhost`, `127.0.0.0/8`, `[::1]`) allowed too: they reach the services of
   * the machine itself (Redis, the other Agent-Reach services), so only by
   * {@link outboundLoopbackAllowed}'s decision.
   */
  loopback: boolean;
}

/** `REACH_OUTBOUND_LOOPBACK`: `auto` allows loopback targets only while auth is off. */
export type OutboundLoopbackSetting = 'auto' | 'on' | 'off';

/**
 * Whether URLs callers name may be loopback hosts. With API keys required a key holder could
 * otherwise map the machine's own services by the answers (docs/SECURITY.md), so `auto` allows
 * them only while auth is off, which is on loopback only and every caller is the operator.
 */
export function outboundLoopbackAllowed(
  setting: OutboundLoopbackSetting,
  authRequired: boolean,
): boolean {
  return setting === 'on' || (setting === 'auto' && !authRequired);
}

/** True for a URL's hostname that `allowed` names, or a loopback one when it allows loopback. */
export function isAllowedHost(hostname: string, allowed: OutboundHosts): boolean {
  const host = hostname.toLowerCase();
  return (allowed.loopback && isLoopbackHost(host)) || allowed.hosts.includes(host);
}

/** What is wrong with a URL a caller named for a service to reach (`checkOutboundUrl`). */
export type OutboundUrlProblem = 'not_url' | 'not_http' | 'credentials' | 'host';

/**
 * A URL a caller named for the service to reach (a card to fetch, a webhook to post to), checked:
 * http or https, no credentials in it, and a host `isAllowedHost` allows. The URL, or what is
 * wrong with it (with the host it named, for `host`); each caller words its own refusal.
 */
export function checkOutboundUrl(
  text: string,
  allowed: OutboundHosts,
): { url: URL } | { problem: OutboundUrlProblem; host?: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'not_url' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'not_http' };
  if (url.username !== '' || url.password !== '') return { problem: 'credentials' };
  if (!isAllowedHost(url.hostname, allowed)) return { problem: 'host', host: url.hostname };
  return { url };
}

/**
 * Why `host` is refused, for a caller's refusal message: `setting` is the host list that would
 * allow it. The words depend on `allowed` only, never on the host or what listens there, so a
 * refusal tells a key holder nothing about the machine's loopback services.
 */
export function hostRefusal(host: string, setting: string, allowed: OutboundHosts): string {
  return allowed.loopback
    ? `host ${host} is neither loopback nor in ${setting}`
    : `host ${host} is not in ${setting} (a loopback host needs ${SHARED_SETTINGS.outboundLoopback.env}=on while API keys are required)`;
}

// The host-list setting format lives with the settings tables; re-exported for the callers here.
export { hostListFrom } from '@agent-reach/protocol';
