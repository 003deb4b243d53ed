import { clipText, ERROR_TEXT_MAX_CHARS } from './failures.ts';

/**
 * A reply whose status is not 2xx, thrown by {@link checkedFetch} so that an SDK's own handling of
 * it (an error whose text holds the status) is bypassed and the call maps like an HTTP
 * endpoint's: `HTTP_<status>`, retryable for 408, 429 and 5xx, with `Retry-After`.
 */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  readonly status: number;
  /** The body's first 500 characters. */
  readonly body: string;
  /** The `Retry-After` header, when the reply had one. */
  readonly retryAfter: string | null;
  constructor(status: number, body: string, retryAfter: string | null) {
    super(`HTTP ${status}${body ? `: ${body}` : ''}`);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

/** True when `value` is an {@link HttpStatusError}, itself or as a cause. */
export function httpStatusErrorIn(value: unknown, depth = 0): HttpStatusError | undefined {
  if (value instanceof HttpStatusError) return value;
  if (!(value instanceof Error) || depth > 4) return undefined;
  return httpStatusErrorIn(value.cause, depth + 1);
}

/** The first {@link ERROR_TEXT_MAX_CHARS} characters of a reply's body; the rest is not read. */
export async function bodyPrefix(res: Response): Promise<string> {
  if (!res.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const bytes of res.body as AsyncIterable<Uint8Array>) {
      text += decoder.decode(bytes, { stream: true });
      if (text.length >= ERROR_TEXT_MAX_CHARS) break;
    }
  } catch {
    // A body that breaks off still says what it said so far.
  }
  return clipText(text);
}

/** Options of {@link checkedFetch}. */
export interface CheckedFetchOptions {
  /** Which methods' non-2xx replies are thrown. @default every method */
  checks?: (method: string) => boolean;
  /** Longest a request the SDK sends without a signal of its own may take (a card fetch). */
  timeoutMs?: number;
  /**
   * The declared endpoint's URL: every request must go to its host (`host:port`), so an
   * AgentCard naming another service URL, or a redirect, cannot aim the relay elsewhere.
   */
  sameHostAs?: string;
}

/** A request the relay refused to send: it names another host than the declared endpoint's. */
export class ForeignHostError extends Error {
  override readonly name = 'ForeignHostError';
}

/**
 * A fetch for protocol SDKs: it sends `headers` (the target's declared ones) under the SDK's
 * own, and throws an {@link HttpStatusError} for a reply that is not 2xx when `checks(method)`
 * says so (an MCP client must see the 405 of a GET it may make, for one).
 */
export function checkedFetch(
  headers: Record<string, string>,
  options: CheckedFetchOptions = {},
): typeof fetch {
  const { checks = () => true, timeoutMs } = options;
  const host = options.sameHostAs === undefined ? undefined : new URL(options.sameHostAs).host;
  return async (input, init) => {
    if (host !== undefined) {
      const target = new URL(input instanceof Request ? input.url : String(input));
      if (target.host !== host)
        throw new ForeignHostError(
          `the endpoint named ${target.host} for a call, not its declared host ${host}: the relay calls only the declared host`,
        );
    }
    const merged = new Headers(headers);
    new Headers(init?.headers).forEach((value, name) => merged.set(name, value));
    // A signal of its own per request: undici lets go of its abort listener on a request's
    // signal only when the request is collected, and the MCP transport passes one signal to all.
    const signal = init?.signal
      ? AbortSignal.any([init.signal])
      : timeoutMs === undefined
        ? undefined
        : AbortSignal.timeout(timeoutMs);
    // A redirect is not followed: it could lead off the declared host. It is a reply like any
    // other status that is not 2xx.
    const res = await fetch(input, { ...init, headers: merged, signal, redirect: 'manual' });
    if ((res.status >= 200 && res.status < 300) || !checks((init?.method ?? 'GET').toUpperCase()))
      return res;
    throw new HttpStatusError(res.status, await bodyPrefix(res), res.headers.get('retry-after'));
  };
}
