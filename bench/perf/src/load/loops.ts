import { monoMs } from '../clock.ts';
import type { RunRequest } from './protocol.ts';
import type { Tracker } from './tracker.ts';

/**
 * A system as its callers see it. `submit` resolves once the task is accepted; the result is
 * reported to the run's tracker by whoever receives it (a long-poll loop, QueueEvents, an HTTP
 * response). It throws {@link RetryLater} when the system asks to be asked again (503 NO_AGENT),
 * and anything else for a failure.
 */
export interface Target {
  submit(key: string): Promise<void>;
}

/** The system refused a submission for now; it is sent again shortly. */
export class RetryLater extends Error {
  override readonly name = 'RetryLater';
}

/**
 * Backoff of a refused submission, as ReachClient.run() does it: 100 ms doubling to 2 s, ±20 %
 * jitter. A client that hammers a full system only burns the CPU the system needs to catch up.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  return Math.min(2000, 100 * 2 ** attempt) * (0.8 + 0.4 * random());
}

function send(target: Target, tracker: Tracker, key: string, attempt = 0): void {
  target.submit(key).catch((err: unknown) => {
    if (!tracker.isOutstanding(key)) return;
    if (err instanceof RetryLater) {
      tracker.retries++;
      tracker.firstRetry ??= err.message.slice(0, 300);
      setTimeout(() => {
        // A run that ended (drain timeout) sends nothing more.
        if (tracker.isOutstanding(key)) send(target, tracker, key, attempt + 1);
      }, retryDelayMs(attempt));
    } else tracker.fail(key, err);
  });
}

/** Resolves true once nothing is outstanding, false after `timeoutMs`. */
function drained(tracker: Tracker, timeoutMs: number, alsoDone: () => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    const check = () => {
      if (tracker.outstanding === 0 && alsoDone()) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    const prev = tracker.onSettled;
    tracker.onSettled = () => {
      prev();
      check();
    };
    check();
  });
}

/**
 * Closed loop: keeps `window` tasks outstanding (submitted, no result yet) and sends the next
 * one as each settles — `tasks` in all (flood), or for `durationMs` (http: one connection per
 * outstanding task, each waiting for its result). Resolves true when every task settled.
 */
export async function closedLoop(
  target: Target,
  tracker: Tracker,
  req: RunRequest,
): Promise<boolean> {
  const window = req.window ?? 100;
  const total = req.tasks ?? Infinity;
  const stopAt = req.durationMs !== undefined ? monoMs() + req.durationMs : Infinity;
  let n = 0;
  let finishedSubmitting = false;
  const more = () => n < total && monoMs() < stopAt;
  tracker.onSettled = () => {
    while (tracker.outstanding < window && more()) {
      const key = `${tracker.id}-${n++}`;
      tracker.start(key, monoMs());
      send(target, tracker, key);
    }
    if (!more()) finishedSubmitting = true;
  };
  tracker.onSettled();
  // A duration-bound run whose window is full re-checks the clock only when a task settles,
  // so the drain below also ends it on time.
  const deadline = (req.durationMs ?? 0) + req.drainTimeoutMs;
  return drained(tracker, deadline, () => finishedSubmitting || !more());
}

/**
 * Open loop: submits at `rate` per second for `durationMs` whatever the results, each task timed
 * from its scheduled moment (so a caller that falls behind does not hide the delay). Resolves
 * true when every task settled.
 */
export async function openLoop(
  target: Target,
  tracker: Tracker,
  req: RunRequest,
): Promise<boolean> {
  const rate = req.rate ?? 1000;
  const total = Math.max(1, Math.round((rate * (req.durationMs ?? 1000)) / 1000));
  const interval = 1000 / rate;
  const t0 = monoMs();
  let n = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = monoMs();
      while (n < total && t0 + n * interval <= now) {
        const key = `${tracker.id}-${n}`;
        tracker.start(key, t0 + n * interval);
        send(target, tracker, key);
        n++;
      }
      if (n >= total) resolve();
      else setTimeout(tick, Math.max(0, t0 + n * interval - monoMs()));
    };
    tick();
  });
  return drained(tracker, req.drainTimeoutMs, () => true);
}
