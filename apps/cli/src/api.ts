import { ApiError, NetworkError } from './errors.ts';

/** Options of one request. */
export interface RequestOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  /** Query-string parameters; `undefined` values are left out. */
  query?: Record<string, string | number | undefined>;
  /** @default 10000 */
  timeoutMs?: number;
}

/** A small JSON-over-HTTP client for one service (the router or registry-sync). */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  /** The full URL of `path` with its query string. */
  url(path: string, query: RequestOptions['query'] = {}): string {
    const url = new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    for (const [k, v] of Object.entries(query))
      if (v !== undefined) url.searchParams.set(k, String(v));
    return url.href;
  }

  /**
   * Sends the request and parses the JSON reply.
   * @throws ApiError for a non-2xx reply; NetworkError when the server cannot be reached in time.
   */
  async request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    const url = this.url(path.replace(/^\//, ''), opts.query);
    const hasBody = opts.body !== undefined;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: opts.method ?? (hasBody ? 'POST' : 'GET'),
        headers: hasBody ? { 'content-type': 'application/json' } : {},
        ...(hasBody ? { body: JSON.stringify(opts.body) } : {}),
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      });
      text = await res.text();
    } catch (cause) {
      const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
      const why =
        inner instanceof Error
          ? ((inner as NodeJS.ErrnoException).code ?? inner.message)
          : String(inner);
      throw new NetworkError(url, `cannot reach ${new URL(url).origin}: ${why}`, { cause });
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const reply = (typeof body === 'object' && body !== null ? body : {}) as {
        error?: unknown;
        message?: unknown;
      };
      const code = typeof reply.error === 'string' ? reply.error : `HTTP_${res.status}`;
      const message =
        typeof reply.message === 'string' ? reply.message : text.slice(0, 200) || res.statusText;
      throw new ApiError(res.status, code, message);
    }
    return body as T;
  }
}
