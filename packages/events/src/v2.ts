import { HttpError, InfluxDB, setLogger, type WriteApi } from '@influxdata/influxdb-client';
import type { Logger } from 'pino';
import { errorMessage, type Counters, type WriteBackend } from './backend.ts';
import type { RateLimitedLog } from './log.ts';
import type { ResolvedEventSinkOptions } from './options.ts';

let clientLogTarget: Logger | undefined;
let clientLogInstalled = false;

/**
 * The client library logs through a process-wide logger that defaults to the console. Route it
 * to the latest v2 sink's logger at debug level: the sink already warns, rate-limited, about failures.
 */
function routeClientLog(logger: Logger): void {
  clientLogTarget = logger;
  if (clientLogInstalled) return;
  clientLogInstalled = true;
  setLogger({
    error: (message: string, err?: unknown) =>
      clientLogTarget?.debug({ err: errorMessage(err) }, message),
    warn: (message: string, err?: unknown) =>
      clientLogTarget?.debug({ err: errorMessage(err) }, message),
  });
}

/**
 * Writes through @influxdata/influxdb-client's WriteApi (`/api/v2/write`), which owns retries and
 * a retry buffer bounded by `maxBufferPoints` (oldest dropped first). Its flush timer is off
 * (`flushInterval: 0`; its timers are not unref'd): the sink's timer drives every flush.
 */
export class V2Writer implements WriteBackend {
  /** @inheritdoc */
  readonly api = 'v2';
  private readonly writeApi: WriteApi;
  private detached = false;

  /**
   * @param o - resolved options with a URL.
   * @param counters - the sink's counters, updated in place from the client's callbacks.
   * @param log - the sink's rate-limited log.
   */
  constructor(
    o: ResolvedEventSinkOptions & { url: string },
    private readonly counters: Counters,
    private readonly log: RateLimitedLog,
  ) {
    routeClientLog(log.logger);
    const maxRetries = o.maxRetries;
    const jitterMs = 200;
    // Long enough that the retry count, not the clock, always ends a batch's retries — so every
    // failure that ends them is one `writeFailed` call with attempt > maxRetries.
    const maxRetryTime =
      (maxRetries + 1) * (o.requestTimeoutMs + o.retryMaxDelayMs + jitterMs) + 60_000;
    const client = new InfluxDB({ url: o.url, token: o.token, timeout: o.requestTimeoutMs });
    this.writeApi = client.getWriteApi(o.org, o.bucket, 'ns', {
      // One more than a sink batch, so writeRecords never starts a send we could not await.
      batchSize: o.batchSize + 1,
      flushInterval: 0,
      maxBufferLines: o.maxBufferPoints,
      maxRetries,
      maxRetryTime,
      minRetryDelay: o.retryBaseDelayMs,
      maxRetryDelay: o.retryMaxDelayMs,
      exponentialBase: 2,
      retryJitter: jitterMs,
      writeSuccess: (lines: string[]) => {
        this.counters.written += lines.length;
      },
      writeFailed: (error: Error, lines: string[], attempt: number) => {
        this.counters.failedWrites++;
        // Mirrors the client's own rule: it retries non-HTTP errors and HTTP ≥ 429 while attempts remain.
        const rejected = error instanceof HttpError && error.statusCode < 429;
        const status = error instanceof HttpError ? error.statusCode : undefined;
        const ctx = { status, err: errorMessage(error), points: lines.length, attempt };
        if (rejected || attempt > maxRetries || this.detached) {
          this.counters.dropped += lines.length;
          this.log.warn('write-failed', ctx, 'InfluxDB v2 write failed; batch dropped');
        } else {
          this.log.warn('write-failed', ctx, 'InfluxDB v2 write failed; will retry');
        }
      },
      writeRetrySkipped: (entry: { lines: string[] }) => {
        this.counters.dropped += entry.lines.length;
        this.log.warn(
          'retry-overflow',
          { points: entry.lines.length },
          'InfluxDB v2 retry buffer full; oldest dropped',
        );
      },
    });
  }

  /** @inheritdoc */
  ready(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** @inheritdoc */
  async retryPending(force: boolean): Promise<boolean> {
    if (!force) return true; // the client's retry timer handles its buffer
    try {
      await this.writeApi.flush(true);
      return true;
    } catch {
      return false; // counted in writeFailed
    }
  }

  /** @inheritdoc */
  async send(lines: string[]): Promise<boolean> {
    try {
      this.writeApi.writeRecords(lines);
      await this.writeApi.flush();
      return true;
    } catch {
      return false; // counted in writeFailed
    }
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    try {
      await this.writeApi.close();
    } catch {
      // counted in writeFailed; what is left is counted as dropped by the sink
    }
  }

  /** @inheritdoc */
  detach(): void {
    this.detached = true;
    this.writeApi.dispose();
  }
}
