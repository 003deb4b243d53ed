import {
  checkOutboundUrl,
  hostRefusal,
  httpError,
  type OutboundHosts,
  type OutboundUrlProblem,
} from '@agent-reach/service-kit';

/**
 * What is wrong with an endpoint URL a relay would call, in words for the refusal, or undefined
 * when it may be called: http or https, no credentials in it, and one of `allowed`'s hosts
 * (REACH_ENDPOINT_HOSTS) or a loopback host when it allows loopback — the same check as a card
 * URL's (cards/card-fetcher.ts).
 */
export function endpointUrlProblem(
  field: string,
  text: string,
  allowed: OutboundHosts,
): string | undefined {
  const checked = checkOutboundUrl(text, allowed);
  if ('url' in checked) return undefined;
  const why: Record<OutboundUrlProblem, string> = {
    not_url: `${field} is not a URL`,
    not_http: `${field} must be an http or https URL`,
    credentials: `${field} may not carry credentials; give them as headers or bearer_secret, which are kept secret`,
    host: `${field} ${hostRefusal(checked.host ?? '', 'REACH_ENDPOINT_HOSTS', allowed)}; ask the operator to allow the host`,
  };
  return why[checked.problem];
}

/**
 * Checks a declaration's `url` and `health_url`.
 * @throws ENDPOINT_URL_NOT_ALLOWED (403) naming the field and what is wrong
 */
export function checkEndpointUrls(
  urls: { url: string; health_url?: string | undefined },
  allowed: OutboundHosts,
): void {
  for (const [field, text] of [
    ['url', urls.url],
    ['health_url', urls.health_url],
  ] as const) {
    if (text === undefined) continue;
    const problem = endpointUrlProblem(field, text, allowed);
    if (problem !== undefined) throw httpError('ENDPOINT_URL_NOT_ALLOWED', problem);
  }
}
