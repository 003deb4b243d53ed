import { monoMs } from '../clock.ts';
import { summarize } from '../stats.ts';
import type { Mode, RunResult } from './protocol.ts';

/**
 * The tasks of one run: when each was submitted, and the latencies of those that finished.
 * Results for keys it does not know (a previous run's stragglers) are ignored.
 */
export class Tracker {
  private readonly sentAt = new Map<string, number>();
  private readonly finished = new Set<string>();
  private readonly received: number[] = [];
  private readonly done: number[] = [];
  /** Each hop's samples, by name, for the results that came with them. */
  private readonly hops = new Map<string, number[]>();
  private firstSubmit = Infinity;
  private lastDone = -Infinity;
  submitted = 0;
  completed = 0;
  failed = 0;
  retries = 0;
  duplicates = 0;
  firstError: string | undefined;
  firstRetry: string | undefined;
  private closed = false;
  /** Called whenever a task settles (result or failure): the closed loop refills its window. */
  onSettled: () => void = () => undefined;

  constructor(
    readonly id: string,
    readonly mode: Mode,
  ) {}

  /** Tasks submitted and not settled. */
  get outstanding(): number {
    return this.sentAt.size;
  }

  /** Records a submission at `at` (the scheduled time for an open loop). */
  start(key: string, at: number): void {
    this.sentAt.set(key, at);
    this.submitted++;
    if (at < this.firstSubmit) this.firstSubmit = at;
  }

  /**
   * A result arrived; `receivedAt` is when the worker started the task (monotonic ms), `hops`
   * how long each hop of it took (ms), when the caller can tell.
   */
  complete(key: string, receivedAt: number, hops?: Readonly<Record<string, number>>): void {
    const at = this.sentAt.get(key);
    if (at === undefined) {
      if (this.finished.has(key)) this.duplicates++;
      return;
    }
    const now = monoMs();
    this.sentAt.delete(key);
    this.finished.add(key);
    this.completed++;
    this.done.push(now - at);
    if (Number.isFinite(receivedAt)) this.received.push(receivedAt - at);
    for (const [hop, ms] of Object.entries(hops ?? {})) {
      const list = this.hops.get(hop);
      if (list) list.push(ms);
      else this.hops.set(hop, [ms]);
    }
    if (now > this.lastDone) this.lastDone = now;
    this.onSettled();
  }

  /** A task failed for good. */
  fail(key: string, err: unknown): void {
    if (!this.sentAt.delete(key)) return;
    this.finished.add(key);
    this.failed++;
    this.firstError ??= err instanceof Error ? err.message : String(err);
    this.onSettled();
  }

  /** Whether `key` was submitted and has not settled, in a run that is still going on. */
  isOutstanding(key: string): boolean {
    return !this.closed && this.sentAt.has(key);
  }

  /** Ends the run: retries stop, and late results are no longer counted. */
  close(): void {
    this.closed = true;
  }

  /** Whether `key` belongs to this run. */
  owns(key: string): boolean {
    return key.startsWith(`${this.id}-`);
  }

  /** The run's figures. */
  result(timedOut: boolean): RunResult {
    const elapsedMs = this.completed > 0 ? this.lastDone - this.firstSubmit : NaN;
    return {
      id: this.id,
      mode: this.mode,
      submitted: this.submitted,
      completed: this.completed,
      failed: this.failed,
      retries: this.retries,
      duplicates: this.duplicates,
      elapsedMs,
      tps: this.completed > 0 ? (this.completed * 1000) / elapsedMs : NaN,
      received: summarize(this.received),
      done: summarize(this.done),
      timedOut,
      ...(this.hops.size > 0
        ? {
            hops: Object.fromEntries(
              [...this.hops].map(([hop, samples]) => [hop, summarize(samples)]),
            ),
          }
        : {}),
      ...(this.firstError !== undefined ? { firstError: this.firstError } : {}),
      ...(this.firstRetry !== undefined ? { firstRetry: this.firstRetry } : {}),
    };
  }
}
