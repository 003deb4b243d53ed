import { isLoopbackHost } from './auth/auth-mode.ts';

/**
 * True for a URL's hostname that is loopback (`isLoopbackHost`) or one of `hosts` (lower-case
 * host names, as {@link hostListFrom} reads them): where a service may send a request a caller
 * named, so that a caller cannot aim it at any address the service reaches.
 */
export function isAllowedHost(hostname: string, hosts: readonly string[]): boolean {
  const host = hostname.toLowerCase();
  return isLoopbackHost(host) || hosts.includes(host);
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
  hosts: readonly string[],
): { url: URL } | { problem: OutboundUrlProblem; host?: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'not_url' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'not_http' };
  if (url.username !== '' || url.password !== '') return { problem: 'credentials' };
  if (!isAllowedHost(url.hostname, hosts)) return { problem: 'host', host: url.hostname };
  return { url };
}

// The host-list setting format lives with the settings tables; re-exported for the callers here.
export { hostListFrom } from '@agent-reach/protocol';
