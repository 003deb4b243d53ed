import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';
import { SHARED_SETTINGS } from '@agent-reach/protocol';
import { enumSettingFrom } from './enum-setting.ts';

/** Options of {@link startIdleCompaction}. */
export interface IdleCompactionOptions {
  logger: Logger;
  /** How often the event loop's utilization is read, ms. @default 2000 */
  checkMs?: number;
  /** The utilization of the last `checkMs` under which the loop counts as quiet. @default 0.05 */
  quietUtilization?: number;
  /** How far the heap must have grown past its low mark before a compaction, bytes. @default 16 MiB */
  growthBytes?: number;
}

const MIB = 1024 * 1024;

/** The full collection `--expose-gc` gives, reached without starting node with the flag. */
let fullGc: (() => void) | undefined;

/**
 * One full collection that compacts every page it can: V8's own full collections leave the old
 * space's fragmented pages committed (a flood promotes tasks in flight, then they die), and V8 gives
 * them back only in a collection of its memory reducer, which a process that keeps timers running
 * rarely gets.
 */
function compactHeap(): void {
  if (!fullGc) {
    setFlagsFromString('--expose-gc');
    fullGc = runInNewContext('gc') as () => void;
  }
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    fullGc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/**
 * `REACH_IDLE_COMPACT`: whether a service compacts its heap when it goes quiet (`on` when unset).
 * @throws an Error naming the setting for any other value
 */
export function idleCompactFrom(value: string | undefined): boolean {
  return enumSettingFrom(SHARED_SETTINGS.idleCompact, value) === 'on';
}

/**
 * Compacts the heap once the event loop has been quiet for a check (`quietUtilization`) and the
 * heap has grown by `growthBytes` since its lowest size: after a burst the process returns to its
 * resident size before it, instead of keeping the burst's peak. A compaction stops the loop for
 * 0.1–0.2 s after a flood; it only happens while the loop was at most 5 % busy. Returns the stop.
 */
export function startIdleCompaction(o: IdleCompactionOptions): () => void {
  const checkMs = o.checkMs ?? 2000;
  const quietUtilization = o.quietUtilization ?? 0.05;
  const growthBytes = o.growthBytes ?? 16 * MIB;
  let lowMark = getHeapStatistics().total_heap_size;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    const before = getHeapStatistics().total_heap_size;
    lowMark = Math.min(lowMark, before);
    if (utilization >= quietUtilization || before < lowMark + growthBytes) return;
    const started = performance.now();
    compactHeap();
    const after = getHeapStatistics().total_heap_size;
    lowMark = after;
    o.logger.debug(
      {
        heap_before_mib: Math.round(before / MIB),
        heap_after_mib: Math.round(after / MIB),
        pause_ms: Math.round(performance.now() - started),
      },
      'heap compacted while idle',
    );
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
