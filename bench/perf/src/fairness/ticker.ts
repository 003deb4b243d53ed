import { monoMs } from '../clock.ts';

/** A load that runs until {@link Ticker.stop}. */
export interface Ticker {
  /** Ticks whose call was skipped because `maxInFlight` calls were still running. */
  readonly skipped: number;
  /** Stops ticking; resolves once the calls in flight have ended. */
  stop(): Promise<void>;
}

/**
 * Calls `fn(n, scheduledMs)` every `intervalMs` on the monotonic clock, open loop: a late tick
 * runs at once with its scheduled time, so a slow answer does not hide the delay. A tick that
 * finds `maxInFlight` calls still running is skipped and counted (a flood's client falling
 * behind sends less, rather than piling up requests).
 */
export function startTicker(
  intervalMs: number,
  fn: (n: number, scheduledMs: number) => Promise<void>,
  maxInFlight = Infinity,
): Ticker {
  const t0 = monoMs();
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  let skipped = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = monoMs();
    while (!stopped && t0 + n * intervalMs <= now) {
      const at = t0 + n * intervalMs;
      const k = n++;
      if (inFlight.size >= maxInFlight) {
        skipped++;
        continue;
      }
      const call = fn(k, at).finally(() => inFlight.delete(call));
      inFlight.add(call);
    }
    if (!stopped) timer = setTimeout(tick, Math.max(0, t0 + n * intervalMs - monoMs()));
  };
  tick();
  return {
    get skipped() {
      return skipped;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}
