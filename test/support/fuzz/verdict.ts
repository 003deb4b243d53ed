/**
 * What every fuzz leg must show, as a user would check it: no server error (no 5xx, no JSON-RPC
 * -32603 but the designed ones), no answer other than the one owed, no hang, no exit, every
 * endpoint or method fuzzed the number of times asked, and every valid task completed.
 */
import { expect } from 'vitest';
import type { EdgeLegResult } from './edge-leg.ts';
import type { Figures } from './figures.ts';
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
  expectFlowDone(leg);
}

/** Asserts the protocol-edge leg's result: the same, and `reach mcp` ended cleanly. */
export function expectCleanEdgeLeg(leg: EdgeLegResult): void {
  expect(leg.exits).toEqual([]);
  expect(leg.figures.failures).toEqual([]);
  if (!FUZZ_ONLY) expect(leg.targets.length).toBeGreaterThan(35);
  expect(leg.figures.endpoints.size).toBe(leg.targets.length);
  for (const t of leg.targets)
    expect(leg.figures.endpoints.get(t.key)?.requests ?? 0, t.key).toBeGreaterThanOrEqual(t.count);
  if (leg.relayEnd !== undefined) expect(leg.relayEnd, 'reach mcp exit code').toBe(0);
  expectLivezChecked(leg.figures);
  expectFlowDone(leg);
}

function expectLivezChecked(figures: Figures): void {
  if (figures.requests >= 100) expect(figures.livezChecks).toBeGreaterThan(0);
}

function expectFlowDone(leg: Pick<LegResult, 'flow' | 'unfinished'>): void {
  expect(leg.flow.refused).toEqual([]);
  // At least the 20 tasks seeded before the fuzz (a run of a few requests adds few more).
  expect(leg.flow.accepted.length).toBeGreaterThanOrEqual(20);
  expect(leg.unfinished).toEqual([]);
}
