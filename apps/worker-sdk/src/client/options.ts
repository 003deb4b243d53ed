import { randomUUID } from 'node:crypto';
import { CLIENT_DEFAULTS, isValidId } from '@agent-reach/protocol';
import { pino, type Logger } from 'pino';
import { compileBackoff, type BackoffOptions, type CompiledBackoff } from '../util/backoff.ts';
import { clientSettingFromEnv } from '../util/client-env.ts';
import { intIn } from '../util/int-in.ts';

/** Settings of a {@link ReachClient}; resolved once by {@link compileClientOptions}. */
export interface ReachClientOptions {
  /**
   * Base URL of a router (or the load balancer in front of several).
   * @default process.env.REACH_ROUTER_URL, else 'http://127.0.0.1:8081' (docs/SETTINGS.md)
   */
  routerUrl?: string;
  /**
   * API key sent as `Authorization: Bearer <key>` with every request (docs/SECURITY.md); needed
   * when the router requires keys.
   * @default process.env.REACH_KEY
   */
  apiKey?: string;
  /**
   * Topic this client's results are published to and read from. Give a stable one to read the
   * results of tasks submitted before a restart (it is read from the start).
   * @default `client-<random uuid>`
   */
  callbackTopic?: string;
  /**
   * Timeout of each request (a long poll gets this on top of its wait).
   * @default 10000
   */
  requestTimeoutMs?: number;
  /**
   * How long one long poll of the callback topic waits on the server (max 30000).
   * @default 10000
   */
  pollWaitMs?: number;
  /**
   * Most items one poll returns.
   * @default 100
   */
  pollLimit?: number;
  /**
   * Results that arrived before anyone waited for them are kept, up to this many (oldest
   * forgotten first).
   * @default 1000
   */
  maxBufferedResults?: number;
  /**
   * How long `result()` and `run()` wait unless told otherwise.
   * @default 300000
   */
  resultTimeoutMs?: number;
  /**
   * Backoff between failed polls.
   * @default { baseMs: 250, capMs: 5000, jitter: 0.2 }
   */
  pollRetry?: BackoffOptions;
  /**
   * Backoff between the tries of one submission. `submit()` and `run()` retry a 5xx
   * (`STORE_UNAVAILABLE`, `NO_AGENT`, `INTERNAL`, a proxy's 502), a 429 (`AT_CAPACITY`) or a lost
   * connection or timeout, always with the same task_id (the caller's, or one the client makes),
   * so a try that was accepted although its answer said otherwise is not run twice.
   * @default { baseMs: 100, capMs: 2000, jitter: 0.2 }
   */
  submitRetry?: BackoffOptions;
  /**
   * Most tries of one `submit()`, the first included; then it throws a `SubmitFailedError` with
   * the task_id. `run()` retries until its own timeout instead.
   * @default 8
   */
  submitMaxAttempts?: number;
  /**
   * `submit()` starts no new try after this long since its first (a try under way finishes).
   * @default 30000
   */
  submitRetryTimeoutMs?: number;
  /**
   * pino logger.
   * @default pino({ name: 'agent-reach' })
   */
  logger?: Logger;
}

/** {@link ReachClientOptions} with every default filled in and checked. */
export interface CompiledClientOptions {
  readonly routerUrl: string;
  readonly apiKey: string | undefined;
  readonly callbackTopic: string;
  readonly requestTimeoutMs: number;
  readonly pollWaitMs: number;
  readonly pollLimit: number;
  readonly maxBufferedResults: number;
  readonly resultTimeoutMs: number;
  readonly pollRetry: CompiledBackoff;
  readonly submitRetry: CompiledBackoff;
  readonly submitMaxAttempts: number;
  readonly submitRetryTimeoutMs: number;
  readonly logger: Logger;
}

/** Fills in defaults and checks every setting; throws a `TypeError`/`RangeError` naming the bad one. */
export function compileClientOptions(options: ReachClientOptions = {}): CompiledClientOptions {
  const callbackTopic = options.callbackTopic ?? `client-${randomUUID()}`;
  if (!isValidId(callbackTopic))
    throw new TypeError(
      `callbackTopic must match ^[A-Za-z0-9_.:-]{1,128}$, got ${JSON.stringify(callbackTopic)}`,
    );
  return Object.freeze({
    routerUrl: new URL(
      options.routerUrl ?? clientSettingFromEnv('routerUrl') ?? CLIENT_DEFAULTS.routerUrl,
    )
      .toString()
      .replace(/\/+$/, ''),
    apiKey: options.apiKey ?? clientSettingFromEnv('apiKey'),
    callbackTopic,
    requestTimeoutMs: intIn('requestTimeoutMs', options.requestTimeoutMs ?? 10_000, 1, 600_000),
    pollWaitMs: intIn('pollWaitMs', options.pollWaitMs ?? 10_000, 0, 30_000),
    pollLimit: intIn('pollLimit', options.pollLimit ?? 100, 1, 1000),
    maxBufferedResults: intIn(
      'maxBufferedResults',
      options.maxBufferedResults ?? 1000,
      0,
      1_000_000,
    ),
    resultTimeoutMs: intIn(
      'resultTimeoutMs',
      options.resultTimeoutMs ?? 300_000,
      0,
      7 * 24 * 3600_000,
    ),
    pollRetry: compileBackoff(options.pollRetry, { baseMs: 250, capMs: 5000, jitter: 0.2 }),
    submitRetry: compileBackoff(options.submitRetry, { baseMs: 100, capMs: 2000, jitter: 0.2 }),
    submitMaxAttempts: intIn('submitMaxAttempts', options.submitMaxAttempts ?? 8, 1, 1000),
    submitRetryTimeoutMs: intIn(
      'submitRetryTimeoutMs',
      options.submitRetryTimeoutMs ?? 30_000,
      0,
      24 * 3600_000,
    ),
    logger: options.logger ?? pino({ name: 'agent-reach' }),
  });
}
