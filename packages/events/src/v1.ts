import { errorMessage, backoffMs, type Counters, type WriteBackend } from './backend.ts';
import { ensureDatabase, isInfluxQueryError } from './influxql.ts';
import type { RateLimitedLog } from './log.ts';
import type { ResolvedEventSinkOptions } from './options.ts';

type Outcome =
  { ok: true } | { ok: false; status: number | undefined; retryable: boolean; detail: string };

/**
 * Writes line protocol to InfluxDB 1.x's `/write?db=…&precision=ns` with fetch. One batch is held
 * for retry at a time; while it waits out its backoff, new points stay in the sink's bounded buffer.
 */
export class V1Writer implements WriteBackend {
  /** @inheritdoc */
  readonly api = 'v1';
  private dbReady = false;
  private retry: { lines: string[]; failures: number; dueAt: number } | undefined;
  private readonly writeUrl: string;
  private readonly headers: Record<string, string>;

  /**
   * @param o - resolved options with a URL.
   * @param counters - the sink's counters, updated in place.
   * @param log - the sink's rate-limited log.
   */
  constructor(
    private readonly o: ResolvedEventSinkOptions & { url: string },
    private readonly counters: Counters,
    private readonly log: RateLimitedLog,
  ) {
    this.writeUrl = `${o.url}/write?db=${encodeURIComponent(o.bucket)}&precision=ns`;
    this.headers = { 'content-type': 'text/plain; charset=utf-8' };
    if (o.token !== undefined) this.headers.authorization = `Token ${o.token}`;
  }

  /** @inheritdoc */
  async ready(): Promise<boolean> {
    if (this.dbReady) return true;
    try {
      await ensureDatabase(this.o.url, this.o.bucket, { timeoutMs: this.o.requestTimeoutMs });
      this.dbReady = true;
    } catch (err) {
      if (isInfluxQueryError(err) && !err.retryable) {
        // E.g. a user without admin rights: the database may well exist, so write anyway.
        this.log.warn(
          'create-db',
          { err: errorMessage(err), db: this.o.bucket },
          'CREATE DATABASE refused; writing anyway',
        );
        this.dbReady = true;
        return true;
      }
      this.log.warn(
        'create-db',
        { err: errorMessage(err), db: this.o.bucket },
        'CREATE DATABASE failed; buffering events',
      );
      return false;
    }
    return true;
  }

  /** @inheritdoc */
  async retryPending(force: boolean): Promise<boolean> {
    const r = this.retry;
    if (r === undefined) return true;
    if (!force && Date.now() < r.dueAt) return false;
    this.retry = undefined;
    return this.attempt(r.lines, r.failures);
  }

  /** @inheritdoc */
  send(lines: string[]): Promise<boolean> {
    return this.attempt(lines, 0);
  }

  /** @inheritdoc */
  close(): Promise<void> {
    return Promise.resolve(); // the sink's final pass already forced the pending retry
  }

  /** @inheritdoc */
  detach(): void {
    this.retry = undefined;
  }

  private async attempt(lines: string[], failures: number): Promise<boolean> {
    const outcome = await this.post(lines);
    if (outcome.ok) {
      this.counters.written += lines.length;
      return true;
    }
    this.counters.failedWrites++;
    // 404 is "database not found": someone dropped it, so create it again before the retry.
    if (outcome.status === 404) this.dbReady = false;
    const ctx = {
      status: outcome.status,
      err: outcome.detail,
      points: lines.length,
      attempt: failures + 1,
    };
    if (!outcome.retryable) {
      this.counters.dropped += lines.length;
      this.log.warn('write-rejected', ctx, 'InfluxDB rejected a batch of task events; dropped');
      return true; // the server is up; the next batch may be fine
    }
    if (failures >= this.o.maxRetries) {
      this.counters.dropped += lines.length;
      this.log.warn('write-failed', ctx, 'InfluxDB write failed; retries exhausted, batch dropped');
      return false;
    }
    const delay = backoffMs(failures + 1, this.o.retryBaseDelayMs, this.o.retryMaxDelayMs);
    this.retry = { lines, failures: failures + 1, dueAt: Date.now() + delay };
    this.log.warn(
      'write-failed',
      { ...ctx, retryInMs: delay },
      'InfluxDB write failed; will retry',
    );
    return false;
  }

  private async post(lines: string[]): Promise<Outcome> {
    try {
      const res = await fetch(this.writeUrl, {
        method: 'POST',
        headers: this.headers,
        body: lines.join('\n'),
        signal: AbortSignal.timeout(this.o.requestTimeoutMs),
      });
      const text = await res.text(); // read it all so the connection is reused
      if (res.ok) return { ok: true };
      const retryable = res.status === 404 || res.status === 429 || res.status >= 500;
      return { ok: false, status: res.status, retryable, detail: text.slice(0, 300) };
    } catch (err) {
      return { ok: false, status: undefined, retryable: true, detail: errorMessage(err) };
    }
  }
}
