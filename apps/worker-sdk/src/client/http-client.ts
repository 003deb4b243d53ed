import { DEFAULT_BACKOFF } from '../util/backoff.ts';
import { clientSettingFromEnv } from '../util/client-env.ts';
import { joinUrl, requestOk, type JsonRequest } from '../util/http.ts';
import { followTaskEvents, type TaskEventMessage, type TaskEventsOptions } from './task-events.ts';

/** Options of one {@link ReachHttpClient.request}. */
export interface HttpRequestOptions {
  /** @default 'POST' with a body, else 'GET' */
  method?: JsonRequest['method'];
  body?: unknown;
  /** Query-string parameters; `undefined` values are left out. Never a key: keys go in a header. */
  query?: Record<string, string | number | undefined>;
  /** @default the client's `timeoutMs` */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Settings of a {@link ReachHttpClient}. */
export interface ReachHttpClientOptions {
  /** Base URL of the service (a router, registry-sync, or a load balancer in front). */
  baseUrl: string;
  /**
   * API key sent as `Authorization: Bearer <key>` (docs/SECURITY.md).
   * @default process.env.REACH_KEY
   */
  apiKey?: string;
  /** @default 10000 */
  timeoutMs?: number;
}

/**
 * A small JSON-over-HTTP client for any endpoint of the router or registry-sync, with the SDK's
 * error model: a non-2xx reply rejects with a `ReachHttpError` (its stable `code`), no answer
 * with a `ReachConnectionError`. The `reach` CLI is built on it.
 */
export class ReachHttpClient {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ReachHttpClientOptions) {
    this.baseUrl = new URL(options.baseUrl).toString().replace(/\/+$/, '');
    this.#apiKey = options.apiKey ?? clientSettingFromEnv('apiKey');
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The full URL of `path` with its query string. */
  url(path: string, query: HttpRequestOptions['query'] = {}): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${joinUrl(this.baseUrl, path.startsWith('/') ? path : `/${path}`)}${qs ? `?${qs}` : ''}`;
  }

  /**
   * Sends the request and resolves with the parsed JSON reply (undefined for an empty one).
   * @throws ReachHttpError for a non-2xx reply; ReachConnectionError when no answer came in time.
   */
  async request<T>(path: string, opts: HttpRequestOptions = {}): Promise<T> {
    const body = await requestOk({
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      url: this.url(path, opts.query),
      ...(opts.body === undefined ? {} : { body: opts.body }),
      ...(this.#apiKey === undefined ? {} : { token: this.#apiKey }),
      timeoutMs: opts.timeoutMs ?? this.#timeoutMs,
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
    return (body === '' ? undefined : body) as T;
  }

  /**
   * Follows a task's `GET /v1/tasks/:task_id/events` until its final stage, opening the stream
   * again after the last event seen when it breaks off (as `ReachClient.events()`).
   */
  events(taskId: string, options: TaskEventsOptions = {}): AsyncGenerator<TaskEventMessage> {
    return followTaskEvents(
      { routerUrl: this.baseUrl, apiKey: this.#apiKey, retry: DEFAULT_BACKOFF },
      taskId,
      options,
    );
  }
}
