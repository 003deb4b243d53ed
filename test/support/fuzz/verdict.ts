/**
 * What every fuzz leg must show, as a user would check it: no server error, no hang, no exit,
 * every endpoint fuzzed the number of times asked, and every valid task completed.
 */
import { expect } from 'vitest';
import type { LegResult } from './leg.ts';
import { FUZZ_COUNT, FUZZ_ONLY } from './settings.ts';

/** Asserts a leg's result. */
export function expectCleanLeg(leg: LegResult): void {
  expect(leg.exits).toEqual([]);
  expect(leg.figures.failures).toEqual([]);
  if (!FUZZ_ONLY) expect(leg.published.length).toBeGreaterThan(15);
  expect(leg.figures.endpoints.size).toBe(leg.ops.length);
  for (const [key, ep] of leg.figures.endpoints)
    expect(ep.requests, key).toBeGreaterThanOrEqual(FUZZ_COUNT);
  expect(leg.flow.refused).toEqual([]);
  expect(leg.flow.accepted.length).toBeGreaterThan(20);
  expect(leg.unfinished).toEqual([]);
}
