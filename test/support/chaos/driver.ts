/**
 * The chaos test's caller: submits tasks over HTTP at a steady pace with a bounded number in
 * flight, spread across the routers. A submission that fails (a 503 such as STORE_UNAVAILABLE or
 * NO_AGENT, a 429 AT_CAPACITY, a lost connection, a timeout) is sent again with the SAME task_id
 * — to the next router — until a 202 or 200 says it is accepted.
 */
import { CHAOS_CAPABILITY } from './exec-log.ts';

/** Settings of a {@link SubmitDriver}. */
export interface DriverSettings {
  /** Base URLs of the routers; task i goes first to router i mod n. */
  routers: readonly string[];
  total: number;
  ratePerS: number;
  maxInFlight: number;
  /** Callback topics; task i reports to topic i mod n. */
  topics: readonly string[];
  /** Task ids are `${idPrefix}-${i}`. */
  idPrefix: string;
  /** A task not accepted after trying this long is given up (counted, never silently). */
  giveUpMs: number;
  /** Per-request timeout. */
  requestTimeoutMs: number;
  /** Every n-th task is submitted with a `delay_ms` of 500–1400 ms (held, then sent); 0 = none. */
  delayEvery?: number;
}

/** One task as the driver saw it. */
export interface Submission {
  task_id: string;
  /** The task's number: its payload and delay come from it. */
  index: number;
  topic: string;
  firstTryAt: number;
  acceptedAt?: number;
  /** 202 (created) or 200 (the task_id existed: an earlier try got through). */
  acceptedWith?: number;
  tries: number;
  /** Each try's outcome, in order (`timeout`, `503:NO_AGENT`, `200`, …). */
  outcomes: string[];
}

/** How the tries ended, by outcome: `202`, `200`, `503:NO_AGENT`, `connection`, `timeout`, … */
export type TryCounts = Record<string, number>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Submits `total` tasks and retries each one until accepted. */
export class SubmitDriver {
  readonly submissions: Submission[] = [];
  readonly tries: TryCounts = {};
  /** Tries by second since the start, by outcome: where the refusals cluster. */
  readonly perSecond: TryCounts[] = [];
  private startedAt = Date.now();
  private inFlight = 0;
  private stopped = false;
  private noMore = false;
  private slotFreed: (() => void) | undefined;

  constructor(private readonly s: DriverSettings) {}

  /** Stops sending new tries (a failing test, the time budget); tries in flight still finish. */
  stop(): void {
    this.stopped = true;
    this.slotFreed?.();
  }

  /** Starts no new task; those started are still tried until accepted or given up. */
  finish(): void {
    this.noMore = true;
    this.slotFreed?.();
  }

  /** Tasks accepted so far. */
  accepted(): Submission[] {
    return this.submissions.filter((x) => x.acceptedAt !== undefined);
  }

  /** Resolves once every task is accepted or given up. */
  async run(): Promise<void> {
    const started = (this.startedAt = Date.now());
    const intervalMs = 1000 / this.s.ratePerS;
    const running: Promise<void>[] = [];
    for (let i = 0; i < this.s.total && !this.stopped && !this.noMore; i++) {
      while (this.inFlight >= this.s.maxInFlight && !this.stopped && !this.noMore) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
      }
      const wait = started + i * intervalMs - Date.now();
      if (wait > 0) await sleep(wait);
      if (this.noMore) break;
      this.inFlight++;
      running.push(
        this.submit(i).finally(() => {
          this.inFlight--;
          this.slotFreed?.();
        }),
      );
    }
    await Promise.all(running);
  }

  private async submit(i: number): Promise<void> {
    const topic = this.s.topics[i % this.s.topics.length] as string;
    const sub: Submission = {
      task_id: `${this.s.idPrefix}-${i}`,
      index: i,
      topic,
      firstTryAt: Date.now(),
      tries: 0,
      outcomes: [],
    };
    this.submissions.push(sub);
    const body = this.bodyOf(sub);
    while (!this.stopped && Date.now() - sub.firstTryAt < this.s.giveUpMs) {
      const router = this.s.routers[(i + sub.tries) % this.s.routers.length] as string;
      sub.tries++;
      const outcome = await this.once(router, body);
      sub.outcomes.push(outcome);
      this.tries[outcome] = (this.tries[outcome] ?? 0) + 1;
      const second = Math.floor((Date.now() - this.startedAt) / 1000);
      const bucket = (this.perSecond[second] ??= {});
      bucket[outcome] = (bucket[outcome] ?? 0) + 1;
      if (outcome === '202' || outcome === '200') {
        sub.acceptedAt = Date.now();
        sub.acceptedWith = Number(outcome);
        return;
      }
      await sleep(Math.min(1000, 50 * 2 ** Math.min(sub.tries, 5)));
    }
  }

  /**
   * The caller's recovery after the traffic: submits an accepted task again, the same request
   * with the same task_id, trying each router in turn until one answers 200 (the task exists) or
   * 202 (it did not: its write was lost, and it is accepted anew). Returns the last outcome.
   */
  async resubmit(sub: Submission, giveUpMs = 15_000): Promise<string> {
    const body = this.bodyOf(sub);
    const started = Date.now();
    let outcome = 'none';
    for (let n = 0; Date.now() - started < giveUpMs; n++) {
      outcome = await this.once(this.s.routers[n % this.s.routers.length] as string, body);
      if (outcome === '202' || outcome === '200') return outcome;
      await sleep(250);
    }
    return outcome;
  }

  /** The request body of a task: the same on every try and re-submission. */
  private bodyOf(sub: Submission): string {
    const i = sub.index;
    return JSON.stringify({
      task_id: sub.task_id,
      capability: CHAOS_CAPABILITY,
      payload: { i },
      callback_topic: sub.topic,
      ...(this.s.delayEvery && i % this.s.delayEvery === 0
        ? { delay_ms: 500 + (i % 10) * 100 }
        : {}),
    });
  }

  /** One try; returns the outcome's name. */
  private async once(router: string, body: string): Promise<string> {
    try {
      const res = await fetch(`${router}/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.s.requestTimeoutMs),
      });
      const text = await res.text();
      if (res.status === 200 || res.status === 202) return String(res.status);
      let code = '?';
      try {
        const error = (JSON.parse(text) as { error?: unknown }).error;
        if (typeof error === 'string') code = error;
      } catch {
        // not JSON: keep '?'
      }
      return `${res.status}:${code}`;
    } catch (err: unknown) {
      return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
        ? 'timeout'
        : 'connection';
    }
  }
}
