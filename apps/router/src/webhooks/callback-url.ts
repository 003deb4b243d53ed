import {
  checkOutboundUrl,
  hostRefusal,
  httpError,
  type OutboundHosts,
  type OutboundUrlProblem,
} from '@agent-reach/service-kit';

/**
 * A task's `callback_url`, checked by the outbound URL rules: http or https, no credentials, and
 * one of `allowed`'s hosts (REACH_WEBHOOK_HOSTS), or a loopback host when it allows loopback
 * (REACH_OUTBOUND_LOOPBACK). Checked at submission and again before each try.
 * @throws CALLBACK_URL_NOT_ALLOWED (403)
 */
export function allowedCallbackUrl(text: string, allowed: OutboundHosts): URL {
  const checked = checkOutboundUrl(text, allowed);
  if ('url' in checked) return checked.url;
  const why: Record<OutboundUrlProblem, string> = {
    not_url: `callback_url ${JSON.stringify(text.slice(0, 200))} is not a URL`,
    not_http: 'callback_url must be an http or https URL',
    credentials: 'callback_url may not carry credentials',
    host: `callback_url ${hostRefusal(checked.host ?? '', 'REACH_WEBHOOK_HOSTS', allowed)}; ask the operator to allow the host`,
  };
  throw httpError('CALLBACK_URL_NOT_ALLOWED', why[checked.problem]);
}
