import type { RunRequest } from './load/protocol.ts';
import type { BenchOptions } from './options.ts';

/** One kind of run, done for every system in every repetition. */
export interface RunKind {
  /** `flood`, `paced200`, `paced2000`, …, `http`. */
  key: string;
  /** The request, less its id. */
  req: Omit<RunRequest, 'id'>;
  /** How long to wait for the caller's answer. */
  timeoutMs: number;
}

/** The runs of one repetition, in order, from the options. */
export function runPlan(opts: BenchOptions): RunKind[] {
  const kinds: RunKind[] = [];
  if (opts.modes.includes('flood')) {
    const drainTimeoutMs = 4 * opts.drainMs + opts.floodTasks * 5;
    kinds.push({
      key: 'flood',
      req: { mode: 'flood', tasks: opts.floodTasks, window: opts.floodWindow, drainTimeoutMs },
      timeoutMs: drainTimeoutMs + 15_000,
    });
  }
  if (opts.modes.includes('paced')) {
    for (const rate of opts.pacedRates) {
      kinds.push({
        key: `paced${rate}`,
        req: { mode: 'paced', rate, durationMs: opts.pacedMs, drainTimeoutMs: opts.drainMs },
        timeoutMs: opts.pacedMs + opts.drainMs + 15_000,
      });
    }
  }
  if (opts.modes.includes('http')) {
    kinds.push({
      key: 'http',
      req: {
        mode: 'http',
        window: opts.httpConnections,
        durationMs: opts.httpMs,
        drainTimeoutMs: opts.drainMs,
      },
      timeoutMs: opts.httpMs + opts.drainMs + 15_000,
    });
  }
  return kinds;
}

/** Rate of the paced warm-up, tasks/s (lower when every paced run is slower): every system keeps up. */
const WARMUP_PACED_RATE = 2000;

/** The warm-up runs each system does before the measured ones (results discarded). */
export function warmupPlan(opts: BenchOptions): RunKind[] {
  const kinds: RunKind[] = [
    {
      key: 'warmup-flood',
      req: {
        mode: 'flood',
        tasks: opts.warmupTasks,
        window: opts.floodWindow,
        drainTimeoutMs: 4 * opts.drainMs,
      },
      timeoutMs: 4 * opts.drainMs + 15_000,
    },
  ];
  if (opts.modes.includes('paced') && opts.pacedRates.length > 0) {
    // A flood sends large batches; paced runs send a task or two per request, a path the JIT
    // has not optimised yet: without this, a system's first paced run starts seconds behind.
    const rate = Math.min(WARMUP_PACED_RATE, Math.max(...opts.pacedRates));
    kinds.push({
      key: 'warmup-paced',
      req: { mode: 'paced', rate, durationMs: opts.pacedMs, drainTimeoutMs: opts.drainMs },
      timeoutMs: opts.pacedMs + opts.drainMs + 15_000,
    });
  }
  if (opts.modes.includes('http')) {
    kinds.push({
      key: 'warmup-http',
      req: {
        mode: 'http',
        window: opts.httpConnections,
        durationMs: 500,
        drainTimeoutMs: opts.drainMs,
      },
      timeoutMs: opts.drainMs + 15_000,
    });
  }
  return kinds;
}

/** The order of the systems in repetition `rep`: rotated, so none always runs first or last. */
export function rotate<T>(items: readonly T[], rep: number): T[] {
  const n = items.length;
  if (n === 0) return [];
  const k = rep % n;
  return [...items.slice(k), ...items.slice(0, k)];
}
