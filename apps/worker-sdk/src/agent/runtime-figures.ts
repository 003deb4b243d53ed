import {
  monitorEventLoopDelay,
  PerformanceObserver,
  type IntervalHistogram,
} from 'node:perf_hooks';
import type { AgentRuntime } from '@agent-reach/protocol';

/**
 * The process's runtime figures between two heartbeats (docs/OBSERVABILITY.md, Agent runtime):
 * the event loop's delay p99 (`monitorEventLoopDelay`, 20 ms resolution), the share of the time
 * spent in garbage collection (the `gc` entries' durations) and the resident set size. Each
 * `take()` reports since the one before and starts over.
 */
export class RuntimeFigures {
  readonly #loop: IntervalHistogram;
  readonly #gc: PerformanceObserver;
  #gcMs = 0;
  #since = performance.now();

  constructor() {
    this.#loop = monitorEventLoopDelay({ resolution: 20 });
    this.#loop.enable();
    this.#gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.#gcMs += entry.duration;
    });
    this.#gc.observe({ entryTypes: ['gc'] });
  }

  /** The figures since the last take, and a fresh start. */
  take(): AgentRuntime {
    const now = performance.now();
    const elapsed = Math.max(1, now - this.#since);
    // The histogram is in ns; with no sample yet it reads 0.
    const p99 = this.#loop.count > 0 ? this.#loop.percentile(99) / 1e6 : 0;
    const figures: AgentRuntime = {
      loop_lag_p99_ms: Math.round(p99 * 10) / 10,
      gc_share: Math.min(1, Math.round((this.#gcMs / elapsed) * 1e4) / 1e4),
      rss_bytes: process.memoryUsage.rss(),
    };
    this.#loop.reset();
    this.#gcMs = 0;
    this.#since = now;
    return figures;
  }

  /** Stops measuring. */
  stop(): void {
    this.#loop.disable();
    this.#gc.disconnect();
  }
}
