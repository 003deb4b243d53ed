import { describe, expect, it } from 'vitest';
import { parseArgs } from './options.ts';
import { rotate, runPlan } from './plan.ts';

describe('runPlan', () => {
  it('runs flood, each paced rate and http, in that order', () => {
    expect(runPlan(parseArgs([])).map((k) => k.key)).toEqual(['flood', 'paced200', 'paced2000', 'paced4000', 'http']);
    expect(runPlan(parseArgs(['--modes', 'http'])).map((k) => k.key)).toEqual(['http']);
  });
});

describe('rotate', () => {
  it('starts each repetition with the next system', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
  });
});
