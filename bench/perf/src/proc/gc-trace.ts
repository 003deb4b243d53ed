import { monoMs, sleep } from '../clock.ts';

/** One collection as node's `--trace-gc` prints it. */
export interface GcEvent {
  /** `Scavenge`, `Mark-Compact`, `Mark-Compact (reduce)`, `Minor Mark-Compact`, … */
  kind: string;
  /** The pause that ended the collection, ms (the first figure after the heap sizes). */
  pauseMs: number;
  /** Incremental marking steps before it (`+ 34.4 ms in 55 steps`), ms; 0 when none. */
  markingMs: number;
}

/**
 * `[pid:isolate]   1234 ms: <kind> 3.8 (4.0) -> 3.4 (5.0) MB, 3.22 / 0.00 ms  (+ 34.4 ms in 55
 * steps …) …`: the kind, then the pause after `MB,`, then the optional incremental marking.
 */
const GC_LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+[\d.]+ ms: ([A-Za-z-]+(?: [A-Za-z-]+)*(?: \([a-z ]+\))?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, ([\d.]+) \/ [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms in \d+ steps)?/;

/** Reads one line of `--trace-gc` output; undefined for any other line. */
export function parseGcLine(line: string): GcEvent | undefined {
  const m = GC_LINE.exec(line);
  if (!m) return undefined;
  return { kind: m[1] as string, pauseMs: Number(m[2]), markingMs: Number(m[3] ?? 0) };
}

/** GC of one process during one run. */
export interface GcTotals {
  /** Collections, every kind. */
  count: number;
  /** Their final pauses, ms. */
  pauseMs: number;
  /** Incremental marking steps before them, ms (main-thread time as well, spread over the run). */
  markingMs: number;
  /** Collections by kind. */
  byKind: Record<string, number>;
}

/** How long after a run a line may still be on its way through the pipe. */
const PIPE_SLACK_MS = 50;

/** Most events kept: a long session cannot grow without a bound. */
const MAX_EVENTS = 200_000;

/**
 * The `--trace-gc` lines of one process, each stamped with when it arrived (monotonic ms, the
 * clock of a run's window). V8 prints a line as a collection ends; the pipe adds well under a
 * millisecond, so a collection is counted in the run during which its line arrived.
 */
export class GcTrace {
  private readonly events: (GcEvent & { atMs: number })[] = [];

  /** Feeds one output line of the process (other lines are ignored). */
  readonly onLine = (line: string): void => {
    const event = parseGcLine(line);
    if (!event) return;
    if (this.events.length >= MAX_EVENTS) this.events.shift();
    this.events.push({ ...event, atMs: monoMs() });
  };

  /** The collections whose lines arrived within `window` (and the pipe's slack after it). */
  async within(window: { fromMs: number; toMs: number }): Promise<GcTotals> {
    const until = window.toMs + PIPE_SLACK_MS;
    const wait = until - monoMs();
    if (wait > 0) await sleep(wait);
    return totals(this.events.filter((e) => e.atMs >= window.fromMs && e.atMs <= until));
  }
}

/** Adds collections up. */
export function totals(events: readonly GcEvent[]): GcTotals {
  const byKind: Record<string, number> = {};
  let pauseMs = 0;
  let markingMs = 0;
  for (const e of events) {
    byKind[e.kind] = (byKind[e.kind] ?? 0) + 1;
    pauseMs += e.pauseMs;
    markingMs += e.markingMs;
  }
  return { count: events.length, pauseMs, markingMs, byKind };
}
