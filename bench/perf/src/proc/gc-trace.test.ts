import { describe, expect, it } from 'vitest';
import { monoMs } from '../clock.ts';
import { GcTrace, parseGcLine, totals } from './gc-trace.ts';

// Lines as node 20's --trace-gc prints them.
const SCAVENGE =
  '[21019:0x1f016490]       41 ms: Scavenge 3.8 (4.0) -> 3.4 (5.0) MB, 3.22 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ';
const MARK_COMPACT =
  '[21027:0x19f73ec0]      514 ms: Mark-Compact 72.8 (89.9) -> 53.8 (87.6) MB, 17.38 / 0.01 ms  (+ 34.4 ms in 55 steps since start of marking, biggest step 4.7 ms, walltime since start of marking 78 ms) (average mu = 1.000, current mu = 1.000) finalize incremental marking via stack guard; GC in old space requested';
const REDUCE =
  '[7:0x5d1c2a0]    90210 ms: Mark-Compact (reduce) 41.2 (60.1) -> 39.9 (47.3) MB, 6.10 / 0.00 ms  (average mu = 0.990, current mu = 0.991) memory reducer; GC in old space requested';

describe('parseGcLine', () => {
  it('reads the kind, the pause and the incremental marking', () => {
    expect(parseGcLine(SCAVENGE)).toEqual({ kind: 'Scavenge', pauseMs: 3.22, markingMs: 0 });
    expect(parseGcLine(MARK_COMPACT)).toEqual({
      kind: 'Mark-Compact',
      pauseMs: 17.38,
      markingMs: 34.4,
    });
    expect(parseGcLine(REDUCE)?.kind).toBe('Mark-Compact (reduce)');
  });

  it('ignores every other line', () => {
    expect(parseGcLine('{"level":40,"msg":"slow"}')).toBeUndefined();
    expect(parseGcLine('')).toBeUndefined();
  });
});

describe('GcTrace', () => {
  it('counts the collections whose lines arrived during a window', async () => {
    const trace = new GcTrace();
    const fromMs = monoMs();
    trace.onLine(SCAVENGE);
    trace.onLine('not a gc line');
    trace.onLine(MARK_COMPACT);
    const got = await trace.within({ fromMs, toMs: monoMs() });
    expect(got).toMatchObject({ count: 2, byKind: { Scavenge: 1, 'Mark-Compact': 1 } });
    expect(got.pauseMs).toBeCloseTo(20.6);
    expect(got.markingMs).toBeCloseTo(34.4);
    expect((await trace.within({ fromMs: monoMs() + 1000, toMs: monoMs() })).count).toBe(0);
  });

  it('adds nothing up to zeros', () => {
    expect(totals([])).toEqual({ count: 0, pauseMs: 0, markingMs: 0, byKind: {} });
  });
});
