import { errorMessage, type Counters, type WriteBackend } from './backend.ts';
import { detectInfluxApi } from './influxql.ts';
import { eventToLine, isInvalidTaskEventError } from './line.ts';
import { RateLimitedLog } from './log.ts';
import { compileEventSinkOptions, type ResolvedEventSinkOptions } from './options.ts';
import { RingBuffer } from './ring.ts';
import type { EventSink, EventSinkOptions, EventSinkStats, TaskEvent } from './types.ts';
import { V1Writer } from './v1.ts';
import { V2Writer } from './v2.ts';

type State = 'running' | 'closing' | 'closed';
type Resolved = ResolvedEventSinkOptions & { url: string };

/** Resolves when `p` settles or at `deadline` (epoch ms), whichever is first; never rejects. */
async function settleBy(p: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    timer.unref();
  });
  try {
    await Promise.race([
      p.then(
        () => undefined,
        () => undefined,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

class InfluxEventSink implements EventSink {
  private readonly queue: RingBuffer<TaskEvent>;
  private readonly log: RateLimitedLog;
  private readonly timer: NodeJS.Timeout;
  private counters: Counters = { written: 0, dropped: 0, failedWrites: 0 };
  private accepted = 0;
  private state: State = 'running';
  private backend: WriteBackend | undefined;
  /** Passes run one after another; this is the tail of the chain. */
  private chain: Promise<void> = Promise.resolve();
  private queuedPasses = 0;
  private reportedDropped = 0;
  private closing: Promise<void> | undefined;

  constructor(private readonly o: Resolved) {
    this.queue = new RingBuffer(o.maxBufferPoints);
    this.log = new RateLimitedLog(o.logger);
    if (o.api !== 'auto') this.backend = this.createBackend(o.api);
    this.timer = setInterval(() => this.tick(), o.flushIntervalMs);
    this.timer.unref(); // never hold the process open
  }

  write(event: TaskEvent): void {
    this.accepted++;
    if (this.state !== 'running') this.counters.dropped++;
    else if (this.queue.push(event)) this.counters.dropped++;
  }

  flush(): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    return this.enqueuePass(false);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  stats(): EventSinkStats {
    const { written, dropped, failedWrites } = this.counters;
    return {
      written,
      dropped,
      failedWrites,
      buffered: Math.max(0, this.accepted - written - dropped),
      api: this.backend?.api ?? 'none',
    };
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    clearInterval(this.timer);
    const deadline = Date.now() + this.o.closeTimeoutMs;
    await settleBy(this.enqueuePass(true, deadline), deadline);
    if (this.backend) await settleBy(this.backend.close(), deadline);
    this.backend?.detach();
    this.queue.clear();
    // Whatever was not written by now is lost: count it, then give the backend (which may
    // still see a late answer to a request in flight) a counters object nobody reads.
    const left = this.stats().buffered;
    this.counters = { ...this.counters, dropped: this.counters.dropped + left };
    this.reportDrops();
    this.state = 'closed';
    this.o.logger.info({ ...this.stats() }, 'event sink closed');
  }

  private tick(): void {
    this.reportDrops();
    if (this.state === 'running' && this.queuedPasses === 0) {
      void this.enqueuePass(false);
    }
  }

  private enqueuePass(final: boolean, deadline?: number): Promise<void> {
    this.queuedPasses++;
    const run = this.chain
      .then(() => this.pass(final, deadline))
      .catch((err: unknown) => {
        this.log.warn(
          'unexpected',
          { err: errorMessage(err) },
          'event sink flush failed unexpectedly',
        );
      })
      .finally(() => {
        this.queuedPasses--;
      });
    this.chain = run;
    return run;
  }

  /** Sends what is queued now, one batch at a time; stops at the first failure. */
  private async pass(final: boolean, deadline: number | undefined): Promise<void> {
    const backend = await this.resolveBackend();
    if (!backend || !(await backend.ready())) return;
    if (!(await backend.retryPending(final))) return;
    let budget = this.queue.size; // what was there when the pass began, so a pass always ends
    while (budget > 0 && this.queue.size > 0) {
      if (deadline !== undefined && Date.now() >= deadline) return;
      const events = this.queue.take(Math.min(this.o.batchSize, budget));
      budget -= events.length;
      const lines = this.toLines(events);
      if (lines.length > 0 && !(await backend.send(lines))) return;
    }
  }

  private async resolveBackend(): Promise<WriteBackend | undefined> {
    if (this.backend) return this.backend;
    try {
      const api = await detectInfluxApi(this.o.url, this.o.requestTimeoutMs);
      this.backend = this.createBackend(api);
      this.o.logger.info({ api }, 'InfluxDB write API detected');
      return this.backend;
    } catch (err) {
      this.log.warn(
        'ping',
        { err: errorMessage(err) },
        'InfluxDB ping failed; buffering events, retrying on the next flush',
      );
      return undefined;
    }
  }

  private createBackend(api: 'v1' | 'v2'): WriteBackend {
    // Backends get the counters object of this moment; see shutdown().
    return api === 'v1'
      ? new V1Writer(this.o, this.counters, this.log)
      : new V2Writer(this.o, this.counters, this.log);
  }

  private toLines(events: TaskEvent[]): string[] {
    const lines: string[] = [];
    for (const event of events) {
      try {
        lines.push(eventToLine(event));
      } catch (err) {
        this.counters.dropped++;
        const field = isInvalidTaskEventError(err) ? err.field : undefined;
        this.log.warn('invalid', { field, err: errorMessage(err) }, 'invalid task event dropped');
      }
    }
    return lines;
  }

  private reportDrops(): void {
    const dropped = this.counters.dropped;
    if (dropped <= this.reportedDropped) return;
    const ctx = { dropped, since: dropped - this.reportedDropped, buffered: this.stats().buffered };
    if (this.log.warn('dropped', ctx, 'task events dropped (InfluxDB slow or down)'))
      this.reportedDropped = dropped;
  }
}

/** A sink that discards everything: for a process without `INFLUX_URL`. */
class NoopEventSink implements EventSink {
  write(_event: TaskEvent): void {}
  flush(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  stats(): EventSinkStats {
    return { written: 0, dropped: 0, failedWrites: 0, buffered: 0, api: 'none' };
  }
}

/**
 * Creates the sink that records task events in InfluxDB (architecture invariant 7: it never
 * blocks or slows dispatch). Without `url` it is a no-op. Timers are unref'd; call `close()` on
 * shutdown to flush what is buffered.
 * @throws RangeError or TypeError for invalid options (see `compileEventSinkOptions`).
 */
export function createEventSink(opts: EventSinkOptions = {}): EventSink {
  const o = compileEventSinkOptions(opts);
  if (o.url === undefined) return new NoopEventSink();
  return new InfluxEventSink({ ...o, url: o.url });
}
