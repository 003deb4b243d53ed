import {
  checkOutboundUrl,
  hostRefusal,
  httpError,
  type OutboundHosts,
  type OutboundUrlProblem,
} from '@agent-reach/service-kit';

/** Where and how registry-sync may fetch an AgentCard named by `card_url`. */
export interface CardFetchSettings extends OutboundHosts {
  /** Host names allowed, lower case (REACH_CARD_HOSTS). */
  hosts: readonly string[];
  /** Loopback hosts allowed too (REACH_OUTBOUND_LOOPBACK, resolved with the auth decision). */
  loopback: boolean;
  /** Whole fetch, body included. (REACH_CARD_TIMEOUT_MS) */
  timeoutMs: number;
  /** Largest card body. (REACH_CARD_MAX_BYTES) */
  maxBytes: number;
}

/** Where a failed fetch's detail goes: the log, never the reply. */
export interface CardFetchLog {
  warn(detail: Record<string, unknown>, message: string): void;
}

/**
 * The one answer to every failure of the network step: what failed (no connection, an answer
 * other than 200, a timeout, a body too large) goes to the log only, so that the answers for
 * different targets cannot map the services a host runs.
 */
export const CARD_FETCH_FAILED_MESSAGE =
  'could not fetch the card at card_url: it must answer 200 with the card, without a redirect, within REACH_CARD_TIMEOUT_MS and REACH_CARD_MAX_BYTES; check the URL or send the card inline (card)';

/** Why a fetch failed, for the log. */
type FetchFailure =
  | { kind: 'no_connection'; cause?: string }
  | { kind: 'timeout' }
  | { kind: 'status'; status: number }
  | { kind: 'too_large'; bytes?: number };

/**
 * The URL, checked: http or https, no credentials, and one of `allowed`'s hosts or a loopback
 * host when it allows loopback. Every refused host gets the same words (`hostRefusal`).
 * @throws CARD_URL_NOT_ALLOWED (403), INVALID_CARD (400, not a URL)
 */
export function allowedCardUrl(text: string, allowed: OutboundHosts): URL {
  const checked = checkOutboundUrl(text, allowed);
  if ('url' in checked) return checked.url;
  if (checked.problem === 'not_url')
    throw httpError('INVALID_CARD', `card_url ${JSON.stringify(text)} is not a URL`);
  const why: Record<Exclude<OutboundUrlProblem, 'not_url'>, string> = {
    not_http: 'card_url must be an http or https URL',
    credentials: 'card_url may not carry credentials',
    host: `card_url ${hostRefusal(checked.host ?? '', 'REACH_CARD_HOSTS', allowed)}; send the card inline or ask the operator to allow the host`,
  };
  throw httpError('CARD_URL_NOT_ALLOWED', why[checked.problem]);
}

/** Reads at most `maxBytes` of a body; undefined when it is longer. */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number) {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The failure of a fetch or a body read that threw. */
function thrown(err: unknown): FetchFailure {
  if (err instanceof Error && err.name === 'TimeoutError') return { kind: 'timeout' };
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string'
    ? { kind: 'no_connection', cause: cause.code }
    : { kind: 'no_connection' };
}

/**
 * Fetches the card at `url` and reads its body within the settings' timeout and size cap;
 * redirects are refused (one could lead to a host the allow-list does not name). The body, or
 * why there is none.
 */
async function fetchBody(
  url: URL,
  settings: CardFetchSettings,
): Promise<{ body: string } | FetchFailure> {
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (err: unknown) {
    return thrown(err);
  }
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    return { kind: 'status', status: res.status };
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > settings.maxBytes) {
    await res.body.cancel().catch(() => undefined);
    return { kind: 'too_large', bytes: length };
  }
  try {
    const body = await readCapped(res.body, settings.maxBytes);
    return body === undefined ? { kind: 'too_large' } : { body };
  } catch (err: unknown) {
    return thrown(err);
  }
}

/**
 * Fetches the AgentCard at `text` and parses it as JSON. A URL not allowed is refused before
 * anything is sent; every failure to fetch answers the same CARD_FETCH_FAILED, its detail logged
 * on `log`. What an allowed host serves is the agent's own document: a body that is not JSON is
 * INVALID_CARD, and the caller checks the card against its schema with the schema's message.
 * @throws CARD_URL_NOT_ALLOWED (403), CARD_FETCH_FAILED (502), INVALID_CARD (400, not JSON)
 */
export async function fetchCard(
  text: string,
  settings: CardFetchSettings,
  log: CardFetchLog,
): Promise<unknown> {
  const url = allowedCardUrl(text, settings);
  const fetched = await fetchBody(url, settings);
  if (!('body' in fetched)) {
    log.warn(
      { module: 'cards', host: url.host, ...fetched },
      'card_url fetch failed; the agent was answered CARD_FETCH_FAILED',
    );
    throw httpError('CARD_FETCH_FAILED', CARD_FETCH_FAILED_MESSAGE);
  }
  try {
    return JSON.parse(fetched.body) as unknown;
  } catch {
    throw httpError('INVALID_CARD', `the card at ${url.href} is not JSON`);
  }
}
