import { checkOutboundUrl, httpError, type OutboundUrlProblem } from '@agent-reach/service-kit';

/** Where and how registry-sync may fetch an AgentCard named by `card_url`. */
export interface CardFetchSettings {
  /** Host names allowed besides loopback, lower case (REACH_CARD_HOSTS). */
  hosts: readonly string[];
  /** Whole fetch, body included. (REACH_CARD_TIMEOUT_MS) */
  timeoutMs: number;
  /** Largest card body. (REACH_CARD_MAX_BYTES) */
  maxBytes: number;
}

/**
 * The URL, checked: http or https, no credentials, and a loopback host or one of `hosts`.
 * @throws CARD_URL_NOT_ALLOWED (403)
 */
export function allowedCardUrl(text: string, hosts: readonly string[]): URL {
  const checked = checkOutboundUrl(text, hosts);
  if ('url' in checked) return checked.url;
  if (checked.problem === 'not_url')
    throw httpError('INVALID_CARD', `card_url ${JSON.stringify(text)} is not a URL`);
  const why: Record<Exclude<OutboundUrlProblem, 'not_url'>, string> = {
    not_http: 'card_url must be an http or https URL',
    credentials: 'card_url may not carry credentials',
    host: `card_url host ${checked.host ?? ''} is neither loopback nor in REACH_CARD_HOSTS; send the card inline or ask the operator to allow the host`,
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

/**
 * Fetches the AgentCard at `text` and parses it as JSON, within the settings' timeout and size
 * cap; redirects are refused (one could lead to a host the allow-list does not name).
 * @throws CARD_URL_NOT_ALLOWED (403), CARD_FETCH_FAILED (502), INVALID_CARD (400, not JSON)
 */
export async function fetchCard(text: string, settings: CardFetchSettings): Promise<unknown> {
  const url = allowedCardUrl(text, settings.hosts);
  const failed = (why: string) =>
    httpError('CARD_FETCH_FAILED', `could not fetch the card at ${url.href}: ${why}`);
  const lost = (err: unknown) =>
    failed(
      err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${settings.timeoutMs} ms`
        : 'no connection, or it broke',
    );
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (err: unknown) {
    throw lost(err);
  }
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw failed(`answered ${res.status} without a card (redirects are not followed)`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > settings.maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw failed(`${length} bytes, over ${settings.maxBytes}`);
  }
  let body: string | undefined;
  try {
    body = await readCapped(res.body, settings.maxBytes);
  } catch (err: unknown) {
    throw lost(err);
  }
  if (body === undefined) throw failed(`body over ${settings.maxBytes} bytes`);
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw httpError('INVALID_CARD', `the card at ${url.href} is not JSON`);
  }
}
