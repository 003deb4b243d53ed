import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { idleCompactFrom, startIdleCompaction } from './idle-compaction.ts';
import { serviceLogger } from './logger.ts';

const MIB = 1024 * 1024;

function compactions() {
  const lines: { heap_before_mib: number; heap_after_mib: number }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString()) as { msg: string };
      if (line.msg === 'heap compacted while idle') lines.push(line as never);
      done();
    },
  });
  return { lines, logger: serviceLogger('test', 'debug', stream) };
}

function oldSpaceMib(): number {
  const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  return (old?.space_size ?? 0) / MIB;
}

/**
 * What a flood leaves: objects that lived long enough to be promoted to the old space (tasks in
 * flight across collections), then died, one in twenty kept alive between them.
 */
async function leaveFragmentedOldSpace(): Promise<unknown[]> {
  let held: { i: number; text: string; list: number[] }[] = [];
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 150_000; i++)
      held.push({ i, text: `task-${round}-${i}`, list: [i, round] });
    await sleep(10);
  }
  held = held.filter((_, i) => i % 20 === 0);
  return held;
}

/** Keeps the event loop busy about half of the time until stopped. */
function busyLoop(): () => void {
  const timer = setInterval(() => {
    const until = performance.now() + 25;
    while (performance.now() < until);
  }, 50);
  return () => clearInterval(timer);
}

describe('idle compaction', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('gives a burst’s old space back once the loop is quiet, and not while it is busy', async () => {
    const { lines, logger } = compactions();
    stop = startIdleCompaction({ logger, checkMs: 100, growthBytes: 16 * MIB });
    const stopBusy = busyLoop();
    const kept = await leaveFragmentedOldSpace();
    const before = oldSpaceMib();
    await sleep(600);
    expect(lines).toEqual([]);

    stopBusy();
    const deadline = Date.now() + 3000;
    while (lines.length === 0 && Date.now() < deadline) await sleep(50);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.heap_after_mib).toBeLessThan(lines[0]!.heap_before_mib - 10);
    expect(oldSpaceMib()).toBeLessThan(before - 10);
    expect(kept.length).toBe(30_000);

    // Quiet again without growth: no second compaction.
    await sleep(500);
    expect(lines).toHaveLength(1);
  });

  it('reads REACH_IDLE_COMPACT: on by default, off, and a clear error for anything else', () => {
    expect(idleCompactFrom(undefined)).toBe(true);
    expect(idleCompactFrom('')).toBe(true);
    expect(idleCompactFrom('on')).toBe(true);
    expect(idleCompactFrom('off')).toBe(false);
    expect(() => idleCompactFrom('yes')).toThrow('REACH_IDLE_COMPACT=yes is not one of on, off');
  });
});
