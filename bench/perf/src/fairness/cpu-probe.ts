import { monitorEventLoopDelay } from 'node:perf_hooks';
import { monoMs } from '../clock.ts';
import { processCpuSeconds } from '../proc/cpu.ts';

/** A process whose CPU a window reports. */
export interface Watched {
  name: string;
  pid: number;
}

/** CPU over a window, % of one core, by process; and the bench process's event-loop delay. */
export interface CpuFigures {
  pctOfCore: Record<string, number>;
  /** p99 of this process's event-loop delay, ms: its clients and agents waiting on itself. */
  loopDelayP99Ms: number;
}

/** Started at a window's start; `stop()` at its end gives what the processes used in it. */
export function startCpuProbe(watched: readonly Watched[]): { stop(): CpuFigures } {
  const all = [...watched, { name: 'bench', pid: process.pid }];
  const before = all.map((w) => processCpuSeconds(w.pid));
  const t0 = monoMs();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    stop() {
      delay.disable();
      const seconds = (monoMs() - t0) / 1000;
      const pctOfCore: Record<string, number> = {};
      all.forEach((w, i) => {
        pctOfCore[w.name] = (100 * (processCpuSeconds(w.pid) - (before[i] ?? NaN))) / seconds;
      });
      return { pctOfCore, loopDelayP99Ms: delay.percentile(99) / 1e6 };
    },
  };
}
