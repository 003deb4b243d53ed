/**
 * The pure figures of `--modes fairness` (issue 30): waits with the tasks still waiting at the
 * end counted as lower bounds, Jain's fairness index, the share of slots busy in a window, and the
 * verdicts against the targets.
 */
import { quantile, round } from '../stats.ts';

/** A span of the monotonic clock, ms. */
export interface Window {
  fromMs: number;
  toMs: number;
}

/** One task's wait: submitted at `submitMs`, received by an agent at `receivedMs` (if it was). */
export interface WaitSample {
  submitMs: number;
  /** When the router answered the submission. */
  answeredMs?: number;
  receivedMs?: number;
}

/** Percentiles of the waits of the tasks submitted in a window, ms. */
export interface WaitFigures {
  /** Tasks submitted in the window. */
  submitted: number;
  /** Of those, received by an agent by the end. */
  received: number;
  p50: number;
  p99: number;
  /**
   * True when a task still waiting at the end sits at or below a percentile: its wait is only
   * known to be at least `endMs − submitMs`, so the percentile is a lower bound.
   */
  lowerBound: boolean;
}

/**
 * Waits of the samples submitted within `window`; a task not received by `endMs` counts with the
 * wait it had so far, and makes the percentiles at or above its rank lower bounds.
 */
export function waitFigures(
  samples: Iterable<WaitSample>,
  window: Window,
  endMs: number,
): WaitFigures {
  const waits: { ms: number; open: boolean }[] = [];
  for (const s of samples) {
    if (s.submitMs < window.fromMs || s.submitMs >= window.toMs) continue;
    waits.push(
      s.receivedMs === undefined
        ? { ms: endMs - s.submitMs, open: true }
        : { ms: s.receivedMs - s.submitMs, open: false },
    );
  }
  waits.sort((a, b) => a.ms - b.ms);
  const ms = waits.map((w) => w.ms);
  const p50 = quantile(ms, 0.5);
  const p99 = quantile(ms, 0.99);
  // An open wait below a percentile's value may in truth be above it; one above it already is.
  const firstOpen = waits.find((w) => w.open)?.ms ?? Infinity;
  return {
    submitted: waits.length,
    received: waits.filter((w) => !w.open).length,
    p50,
    p99,
    lowerBound: firstOpen <= p99,
  };
}

/** p50 and p99 of submit → the router's answer, of the samples submitted within `window`, ms. */
export function answerFigures(
  samples: Iterable<WaitSample>,
  window: Window,
): { p50: number; p99: number } {
  const ms: number[] = [];
  for (const s of samples)
    if (s.answeredMs !== undefined && s.submitMs >= window.fromMs && s.submitMs < window.toMs)
      ms.push(s.answeredMs - s.submitMs);
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

/** Jain's fairness index (Σx)² / (n·Σx²): 1 when every x is equal, 1/n when one holds all. */
export function jainIndex(xs: readonly number[]): number {
  let sum = 0;
  let squares = 0;
  for (const x of xs) {
    sum += x;
    squares += x * x;
  }
  return xs.length === 0 || squares === 0 ? NaN : (sum * sum) / (xs.length * squares);
}

/** The share of `slots` busy over `window`: the run time of `runs` within it ÷ (slots × length). */
export function busyShare(
  runs: readonly { startMs: number; endMs: number }[],
  window: Window,
  slots: number,
): number {
  let busy = 0;
  for (const r of runs)
    busy += Math.max(0, Math.min(r.endMs, window.toMs) - Math.max(r.startMs, window.fromMs));
  return busy / (slots * (window.toMs - window.fromMs));
}

/**
 * How evenly the slots turn over: the share of task starts in `window` that came within `nearMs`
 * of the start before. Slots that free together (tasks of one duration started together stay in
 * step) leave a waiting task nothing to take until the next clump.
 */
export function clumpedStarts(
  runs: readonly { startMs: number }[],
  window: Window,
  nearMs: number,
): number {
  const starts = runs
    .map((r) => r.startMs)
    .filter((t) => t >= window.fromMs && t < window.toMs)
    .sort((a, b) => a - b);
  let near = 0;
  for (let i = 1; i < starts.length; i++)
    if ((starts[i] as number) - (starts[i - 1] as number) <= nearMs) near++;
  return starts.length < 2 ? NaN : near / (starts.length - 1);
}

/** A figure against its target. */
export interface Verdict {
  /** What is measured, the figure and the target, in words. */
  line: string;
  met: boolean;
}

const ms = (v: number) => `${round(v)} ms`;

/**
 * Issue 30's first target: B's p99 beside the flood ≤ 1.10 × B-alone p99 + one slot turnover
 * (task duration ÷ slots). A p99 that is only a lower bound and already above the bound fails it;
 * one below the bound cannot pass it.
 */
export function noisyVerdict(
  noisy: WaitFigures,
  alone: WaitFigures,
  taskMs: number,
  slots: number,
): Verdict & { boundMs: number } {
  const turnover = taskMs / slots;
  const boundMs = 1.1 * alone.p99 + turnover;
  const met = !noisy.lowerBound && !alone.lowerBound && noisy.p99 <= boundMs;
  return {
    boundMs,
    met,
    line:
      `B's p99 beside the flood ≤ 1.10 × B-alone p99 + D/S: ${noisy.lowerBound ? '≥ ' : ''}${ms(noisy.p99)}` +
      ` against 1.10 × ${ms(alone.p99)} + ${ms(turnover)} = ${ms(boundMs)}: ${met ? 'met' : 'not met'}`,
  };
}

/** Issue 30's second target: Jain's index over the served counts ≥ 0.95. */
export function jainVerdict(counts: readonly number[]): Verdict & { index: number } {
  const index = jainIndex(counts);
  const met = index >= 0.95;
  return {
    index,
    met,
    line:
      `Jain's index over ${counts.length} backlogged tenants ≥ 0.95: ${round(index)}` +
      ` (served ${Math.min(...counts)}–${Math.max(...counts)} each): ${met ? 'met' : 'not met'}`,
  };
}

/** Issue 30's third target: slots busy under backlog ≥ 95 %. */
export function busyVerdict(share: number, where: string): Verdict {
  const met = share >= 0.95;
  return {
    met,
    line: `slots busy under backlog ≥ 95 %: ${round(100 * share)} % (${where}): ${met ? 'met' : 'not met'}`,
  };
}
