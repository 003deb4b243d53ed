import { describe, expect, it } from 'vitest';
import { DEFAULT_FLEET, fleetCapacity, generateFleet, generateWorkload } from './workload.ts';

describe('generateFleet', () => {
  it('is the same for the same seed and within the bounds', () => {
    const fleet = generateFleet(42);
    expect(fleet).toEqual(generateFleet(42));
    expect(fleet).not.toEqual(generateFleet(43));
    expect(fleet).toHaveLength(DEFAULT_FLEET.agents);
    for (const a of fleet) {
      expect(a.speed).toBeGreaterThanOrEqual(0.5);
      expect(a.speed).toBeLessThanOrEqual(2);
      expect(a.max_concurrency).toBeGreaterThanOrEqual(4);
      expect(a.max_concurrency).toBeLessThanOrEqual(16);
      expect(a.parallel_slots).toBeGreaterThanOrEqual(1);
      expect(a.parallel_slots).toBeLessThanOrEqual(a.max_concurrency);
    }
  });
});

describe('generateWorkload', () => {
  const fleet = generateFleet(42);
  const make = (seed: number, utilisation: number) =>
    generateWorkload({ seed, tasks: 20_000, utilisation, fleet });

  it('is the same for the same seed', () => {
    expect(make(42, 0.9)).toEqual(make(42, 0.9));
    expect(make(42, 0.9).tasks).not.toEqual(make(43, 0.9).tasks);
  });

  it('keeps the tasks and only moves arrivals when the utilisation changes', () => {
    const a = make(42, 0.7).tasks;
    const b = make(42, 0.9).tasks;
    expect(b.map((t) => t.work_ms)).toEqual(a.map((t) => t.work_ms));
    expect(b.map((t) => t.task_id)).toEqual(a.map((t) => t.task_id));
    expect((b.at(-1)?.arrive_ms ?? 0) < (a.at(-1)?.arrive_ms ?? 0)).toBe(true);
  });

  it('spans milliseconds to minutes with a heavy tail', () => {
    const work = make(42, 0.9).tasks.map((t) => t.work_ms);
    expect(Math.min(...work)).toBeLessThan(20);
    expect(Math.max(...work)).toBeGreaterThan(5 * 60_000);
    const sorted = [...work].sort((x, y) => x - y);
    // The median is well under a second; the mean is pulled far above it by the tail.
    const median = sorted[sorted.length >> 1] ?? 0;
    const mean = work.reduce((s, w) => s + w, 0) / work.length;
    expect(median).toBeLessThan(1_000);
    expect(mean).toBeGreaterThan(5 * median);
  });

  it('arrives in order at the rate that offers the asked utilisation', () => {
    const w = make(42, 0.9);
    const times = w.tasks.map((t) => t.arrive_ms);
    expect(times.every((t, i) => i === 0 || t >= (times[i - 1] ?? 0))).toBe(true);
    const offered = (w.arrivalsPerS / 1000) * w.meanWorkMs;
    expect(offered / fleetCapacity(fleet)).toBeCloseTo(0.9, 6);
    const observedPerS = w.tasks.length / ((times.at(-1) ?? 1) / 1000);
    expect(observedPerS / w.arrivalsPerS).toBeGreaterThan(0.97);
    expect(observedPerS / w.arrivalsPerS).toBeLessThan(1.03);
  });
});
