import { describe, expect, it } from 'vitest';
import { placementMiss } from './placement.ts';

describe('placementMiss', () => {
  const eu = { region: 'eu', tags: ['gpu'], capabilities: ['embed'] };
  const us = { region: 'us', tags: [], capabilities: ['embed'] };

  it('keeps a strict region to agents of that region', () => {
    const task = { region: 'eu', region_policy: 'strict' as const };
    expect(placementMiss(task, eu)).toBeUndefined();
    expect(placementMiss(task, us)).toBe('region');
    expect(placementMiss(task, { capabilities: ['embed'] })).toBe('region');
  });

  it('lets anyone take a preferred region (the router already chose among agents)', () => {
    expect(placementMiss({ region: 'eu', region_policy: 'prefer' }, us)).toBeUndefined();
    expect(placementMiss({ region: 'eu' }, us)).toBeUndefined();
  });

  it('wants every tag among the agent’s tags or capabilities', () => {
    expect(placementMiss({ tags: ['gpu', 'embed'] }, eu)).toBeUndefined();
    expect(placementMiss({ tags: ['gpu'] }, us)).toBe('tags');
    expect(placementMiss({ tags: [] }, us)).toBeUndefined();
  });
});
