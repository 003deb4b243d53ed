import { Attempt } from './attempt.ts';
import type {
  CallOutcome,
  CallRequest,
  Discovery,
  EndpointClient,
  EndpointTarget,
} from './endpoint-client.ts';
import { bodyPrefix } from './checked-fetch.ts';
import { CallCode, clipText, errorMessage, failed, httpStatusFailure } from './failures.ts';
import { readEventStream } from './http-sse.ts';
import { networkFailure } from './net-errors.ts';
import { is2xx, probeGet, probeTcp } from './probes.ts';

/**
 * The headers a relay sends with every call of an HTTP endpoint (docs/ENDPOINTS.md), set after
 * the target's own so a declared header cannot forge them.
 */
export const ReachHeader = {
  /** The task's id: the same for every attempt, so the endpoint can run a task once. */
  idempotencyKey: 'Idempotency-Key',
  /** The attempt's number, from 1. */
  attempt: 'Reach-Attempt',
  /** The task's deadline, epoch ms; absent when it has none. */
  deadline: 'Reach-Deadline',
  /** The capability the task was routed under. */
  capability: 'Reach-Capability',
} as const;

/** JSON, or a stream of server-sent events: the two replies an HTTP endpoint may give. */
const ACCEPT = 'application/json, text/event-stream';

/** The media type of a reply, lower-case, without parameters. */
function mediaType(res: Response): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * A plain HTTP JSON endpoint (`protocol: http`): each call is a POST of the payload as JSON to
 * the target's URL with the {@link ReachHeader} headers and the declared ones. Redirects are not
 * followed. The endpoint's capabilities are declared, never discovered.
 *
 * Calls use Node's global fetch, whose dispatcher keeps connections alive per origin (undici's
 * pool), so back-to-back calls of an endpoint reuse their sockets.
 */
export class HttpEndpointClient implements EndpointClient {
  readonly #target: EndpointTarget;

  constructor(target: EndpointTarget) {
    this.#target = target;
  }

  /**
   * POSTs the payload and maps the reply: 2xx JSON is the result (an empty body null, a body
   * that is not JSON `RESULT_NOT_JSON`); 2xx `text/event-stream` is read by `readEventStream`;
   * 3xx, 4xx and 5xx fail as `HTTP_<status>` (retryable for 408, 429 and 5xx, with
   * `retryAfterMs` from a 429's or 503's `Retry-After`), with the body's first 500 characters.
   */
  async call(req: CallRequest): Promise<CallOutcome> {
    const attempt = new Attempt(req, this.#target.timeoutMs);
    try {
      if (attempt.signal.aborted) return attempt.outcome();
      const res = await fetch(this.#target.url, {
        method: 'POST',
        headers: this.#headers(req),
        body: JSON.stringify(req.payload ?? null),
        redirect: 'manual',
        signal: attempt.signal,
      });
      return await this.#reply(res, req);
    } catch (err) {
      if (attempt.signal.aborted) return attempt.outcome();
      return networkFailure(err) ?? failed(CallCode.endpointError, errorMessage(err), true);
    } finally {
      attempt.dispose();
    }
  }

  /** HTTP endpoints declare their capabilities: nothing is discovered. */
  async discover(): Promise<Discovery> {
    return { capabilities: [] };
  }

  /** GET of the health URL (2xx = alive) when one is declared, else a TCP connect to the URL's host. */
  async probe(signal: AbortSignal): Promise<boolean> {
    const { healthUrl, headers, url } = this.#target;
    return healthUrl ? probeGet(healthUrl, headers, signal, is2xx) : probeTcp(url, signal);
  }

  /** Nothing to drop: connections belong to the global fetch pool, which closes idle ones. */
  async close(): Promise<void> {}

  #headers(req: CallRequest): Headers {
    const headers = new Headers({ 'content-type': 'application/json', accept: ACCEPT });
    for (const [name, value] of Object.entries(this.#target.headers)) headers.set(name, value);
    headers.set(ReachHeader.idempotencyKey, req.taskId);
    headers.set(ReachHeader.attempt, String(req.attempt));
    headers.set(ReachHeader.capability, req.capability);
    if (req.deadlineMs > 0) headers.set(ReachHeader.deadline, String(req.deadlineMs));
    else headers.delete(ReachHeader.deadline);
    return headers;
  }

  async #reply(res: Response, req: CallRequest): Promise<CallOutcome> {
    if (is2xx(res.status)) {
      if (mediaType(res) === 'text/event-stream') return readEventStream(res.body, req);
      const text = await res.text();
      if (text.trim() === '') return { kind: 'completed', result: null };
      try {
        return { kind: 'completed', result: JSON.parse(text) as unknown };
      } catch {
        return failed(CallCode.resultNotJson, `the reply is not JSON: ${clipText(text)}`, false);
      }
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const to = res.headers.get('location');
      return failed(`HTTP_${res.status}`, `redirect${to ? ` to ${to}` : ''} not followed`, false);
    }
    return httpStatusFailure(res.status, await bodyPrefix(res), res.headers.get('retry-after'));
  }
}
