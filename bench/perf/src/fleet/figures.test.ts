import { describe, expect, it } from 'vitest';
import {
  cores,
  keptUp,
  snapshotBytesPerAgent,
  snapshotBytesPerS,
  singleOverBatchMsPerBeat,
  syncMsPerBeat,
  syncMsPerRegistration,
  syncMsPerStatusChange,
  type FleetWindow,
} from './figures.ts';

const window = (o: Partial<FleetWindow> = {}): FleetWindow => ({
  seconds: 10,
  sync: { cpuS: 1, rssMiB: 100 },
  router: { cpuS: 0.5, rssMiB: 80 },
  redisCpuS: 0.2,
  beats: 2000,
  beatRequests: 2000,
  beatsFailed: 0,
  beatsLate: 0,
  statusChanges: 0,
  snapshot: {
    versions: 2,
    fullWrites: 2,
    fullBytes: 400_000,
    deltas: 0,
    deltaBytes: 0,
    lastFullBytes: 200_000,
  },
  ...o,
});

describe('fleet figures', () => {
  it('takes CPU seconds over a window as cores', () => {
    expect(cores(1, 10)).toBe(0.1);
    expect(cores(1, 0)).toBeNaN();
  });

  it('adds full snapshots and deltas per second', () => {
    const w = window();
    expect(snapshotBytesPerS(w)).toBe(40_000);
    expect(snapshotBytesPerS({ ...w, snapshot: { ...w.snapshot, deltaBytes: 100_000 } })).toBe(
      50_000,
    );
  });

  it('charges the idle window to the heartbeats answered', () => {
    expect(syncMsPerBeat(window())).toBe(0.5);
    expect(syncMsPerBeat(window({ beats: 0 }))).toBeNaN();
  });

  it('prices a single heartbeat over a batched one by the windows’ difference', () => {
    const single = window({ sync: { cpuS: 2, rssMiB: 100 } });
    // 0.2 − 0.1 cores over 200 beats/s: 0.5 ms more per beat.
    expect(singleOverBatchMsPerBeat(single, window())).toBe(0.5);
    expect(singleOverBatchMsPerBeat(window({ beats: 0 }), window())).toBeNaN();
  });

  it('takes the idle cost out of a registration round', () => {
    const round = {
      agents: 1000,
      ok: 1000,
      failed: 0,
      seconds: 10,
      syncCpuS: 3,
      errors: {},
      latencyMs: { p50: 1, p99: 2, max: 3 },
    };
    // 0.1 core idle, half registered on average: 0.5 s of the 3 s was the fleet's idle cost.
    expect(syncMsPerRegistration(round, 0.1, 0.5)).toBe(2.5);
    expect(syncMsPerRegistration({ ...round, ok: 0 }, 0.1, 0.5)).toBeNaN();
  });

  it('charges what churn adds over the quiet fleet to the changes it adds', () => {
    const quiet = window({ statusChanges: 0 });
    const churn = window({ seconds: 20, sync: { cpuS: 4, rssMiB: 120 }, statusChanges: 400 });
    // 4 s − 0.1 core × 20 s = 2 s over 400 changes.
    expect(syncMsPerStatusChange(churn, quiet)).toBe(5);
    expect(syncMsPerStatusChange(window(), quiet)).toBeNaN();
    // Churn that cost less than the quiet window: not measurable, not a negative cost.
    expect(
      syncMsPerStatusChange(
        window({ statusChanges: 100 }),
        window({ sync: { cpuS: 2, rssMiB: 1 } }),
      ),
    ).toBeNaN();
  });

  it('divides a full snapshot by its agents', () => {
    expect(snapshotBytesPerAgent(250_000, 1000)).toBe(250);
    expect(snapshotBytesPerAgent(0, 1000)).toBeNaN();
  });

  it('calls a window kept up when no beat failed and few were late', () => {
    expect(keptUp(window())).toBe(true);
    expect(keptUp(window({ beatsFailed: 1 }))).toBe(false);
    expect(keptUp(window({ beatsLate: 100 }))).toBe(false);
  });
});
