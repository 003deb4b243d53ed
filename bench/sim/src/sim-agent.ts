import type { SimAgentSpec } from './workload.ts';

interface Running {
  task: number;
  /** Service the agent's clock must reach for this task to be done. */
  finishAt: number;
}

/**
 * One simulated agent. Up to `parallel_slots` tasks run at full speed; past that the agent is
 * shared (processor sharing): with n > parallel_slots tasks each runs at
 * speed × parallel_slots / n. The agent keeps a service clock — the work each of its tasks has
 * received since it started — so a change of n only changes the clock's rate, and the next
 * completion is always the running task with the smallest finish mark.
 */
export class SimAgent {
  /** The most tasks it ever ran at once. */
  peak = 0;
  /**
   * Time inside the measured window weighted by the share of the agent's work capacity in use
   * (min(n, parallel_slots) / parallel_slots), ms.
   */
  busyMs = 0;
  /** Bumped on every change, so a completion scheduled before the change can be told stale. */
  version = 0;
  private readonly running: Running[] = [];
  private clock = 0;
  private clockAt = 0;

  constructor(
    readonly spec: SimAgentSpec,
    private readonly windowStartMs: number,
    private readonly windowEndMs: number,
  ) {}

  /** Tasks running now. */
  get inflight(): number {
    return this.running.length;
  }

  /** True when another task would exceed max_concurrency. */
  get full(): boolean {
    return this.running.length >= this.spec.max_concurrency;
  }

  /** Starts a task of `workMs` (at speed 1); throws rather than exceed max_concurrency. */
  start(task: number, workMs: number, now: number): void {
    if (this.full) {
      throw new Error(
        `${this.spec.agent_id} would run ${this.inflight + 1} > ${this.spec.max_concurrency} tasks`,
      );
    }
    this.advance(now);
    this.running.push({ task, finishAt: this.clock + workMs });
    this.peak = Math.max(this.peak, this.running.length);
    this.version += 1;
  }

  /** When the next task finishes at the current rate; Infinity when idle. */
  nextCompletionAt(now: number): number {
    const next = this.earliest();
    if (next < 0) return Infinity;
    this.advance(now);
    const finishAt = (this.running[next] as Running).finishAt;
    return now + Math.max(0, finishAt - this.clock) / this.rate();
  }

  /** Completes the task that finishes first; returns its index. */
  complete(now: number): number {
    const next = this.earliest();
    if (next < 0) throw new Error(`${this.spec.agent_id} has nothing to complete`);
    this.advance(now);
    const done = this.running[next] as Running;
    this.clock = Math.max(this.clock, done.finishAt);
    this.running[next] = this.running[this.running.length - 1] as Running;
    this.running.pop();
    this.version += 1;
    return done.task;
  }

  /** Closes the busy-time integral at the end of the run. */
  finish(now: number): void {
    this.advance(now);
  }

  /** Work each running task receives per ms. */
  private rate(): number {
    const n = this.running.length;
    return n <= this.spec.parallel_slots
      ? this.spec.speed
      : (this.spec.speed * this.spec.parallel_slots) / n;
  }

  private earliest(): number {
    let best = -1;
    for (let i = 0; i < this.running.length; i++) {
      if (
        best < 0 ||
        (this.running[i] as Running).finishAt < (this.running[best] as Running).finishAt
      )
        best = i;
    }
    return best;
  }

  private advance(now: number): void {
    if (now <= this.clockAt) return;
    const n = this.running.length;
    if (n > 0) {
      this.clock += this.rate() * (now - this.clockAt);
      const from = Math.max(this.clockAt, this.windowStartMs);
      const to = Math.min(now, this.windowEndMs);
      if (to > from)
        this.busyMs +=
          (Math.min(n, this.spec.parallel_slots) / this.spec.parallel_slots) * (to - from);
    }
    this.clockAt = now;
  }
}
