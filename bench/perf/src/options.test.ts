import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from './options.ts';

describe('parseArgs', () => {
  it('gives the full session by default and a short one with --quick', () => {
    const full = parseArgs([]);
    expect(full.reps).toBe(3);
    expect(full.floodTasks).toBe(20_000);
    expect(full.pacedRates).toEqual([200, 2000, 4000]);
    const quick = parseArgs(['--quick']);
    expect(quick.reps).toBe(1);
    expect(quick.floodTasks).toBeLessThan(full.floodTasks);
    expect(quick.systems).toEqual(['reach', 'bullmq', 'floor']);
  });

  it('reads lists and numbers, and refuses what it does not know', () => {
    const o = parseArgs([
      '--only',
      'reach,floor',
      '--modes',
      'flood',
      '--tasks',
      '500',
      '--rates',
      '100,300',
    ]);
    expect(o.systems).toEqual(['reach', 'floor']);
    expect(o.modes).toEqual(['flood']);
    expect(o.floodTasks).toBe(500);
    expect(o.pacedRates).toEqual([100, 300]);
    expect(() => parseArgs(['--only', 'kafka'])).toThrow(UsageError);
    expect(() => parseArgs(['--tasks', 'many'])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseArgs(['--fast'])).toThrow(expect.objectContaining({ helped: false }));
    expect(() => parseArgs(['--help'])).toThrow(expect.objectContaining({ helped: true }));
  });

  it('profiles one Agent-Reach flood', () => {
    const o = parseArgs(['--profile']);
    expect(o).toMatchObject({ profile: true, systems: ['reach'], modes: ['flood'], reps: 1 });
  });
});
