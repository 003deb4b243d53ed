import { describe, expect, it } from 'vitest';
import { decideHealth, type DegradeSettings, type HealthRow } from './health-sweep.ts';

const S: DegradeSettings = {
  degradeErrorRate: 0.1,
  degradeMinTasks: 20,
  degradeCooldownMs: 30_000,
  degradeRecoverProbes: 3,
  ejectMaxShare: 0.5,
};

function row(id: string, outcomes: string, extra: Partial<HealthRow> = {}): HealthRow {
  return {
    id,
    status: 'HEALTHY',
    outcomes,
    degraded: false,
    degradedUntil: 0,
    ejectedUntil: 0,
    capabilities: ['echo'],
    ...extra,
  };
}

describe('decideHealth', () => {
  it('degrades an agent over the error rate once it has enough tasks', () => {
    const rows = [row('bad', 'f'.repeat(20)), row('good', 'o'.repeat(20))];
    expect(decideHealth(rows, 0, S).degrade).toEqual([{ id: 'bad', errors: 20, tasks: 20 }]);
  });

  it('waits for the minimum number of tasks and leaves an agent at the rate alone', () => {
    const rows = [row('few', 'f'.repeat(19)), row('at', 'f' + 'o'.repeat(9) + 'f' + 'o'.repeat(9))];
    expect(decideHealth([...rows, row('x', ''), row('y', '')], 0, S).degrade).toEqual([]);
  });

  it('never puts more than half of a capability out, counting ejected agents', () => {
    const bad = 'f'.repeat(30);
    const two = [row('a', bad), row('b', bad)];
    expect(decideHealth(two, 0, S).degrade.map((d) => d.id)).toEqual(['a']);
    const ejected = [row('a', bad), row('b', 'o', { ejectedUntil: 10 })];
    expect(decideHealth(ejected, 0, S).degrade).toEqual([]);
  });

  it('brings a DEGRADED agent back only after its cooldown and enough passed probes', () => {
    const degraded = (outcomes: string) =>
      row('a', outcomes, { status: 'DEGRADED', degraded: true, degradedUntil: 1000 });
    const peer = row('b', 'o');
    expect(decideHealth([degraded('fffPPP'), peer], 999, S).recover).toEqual([]);
    expect(decideHealth([degraded('fffPP'), peer], 1000, S).recover).toEqual([]);
    expect(decideHealth([degraded('fffPPP'), peer], 1000, S).recover).toEqual(['a']);
    expect(decideHealth([degraded('fPPPf'), peer], 1000, S).recover).toEqual([]);
  });
});
