import { describe, expect, it } from 'vitest';
import { reachKeys } from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { SpeedTracker } from './speed-tracker.ts';

/** A tracker whose Redis is never reached: these checks are the settings' alone. */
const tracker = new SpeedTracker({
  redis: {} as RedisClient,
  keys: reachKeys('test'),
  settings: { slowMs: 3000, slowMsByCapability: { summarise: 20_000 } },
});

describe('SpeedTracker', () => {
  it("takes a capability's own bound, else the default", () => {
    expect(tracker.slowMsFor('summarise')).toBe(20_000);
    expect(tracker.slowMsFor('embed')).toBe(3000);
    expect(tracker.slowMsFor('')).toBe(3000);
    // An inherited property is no capability's bound.
    expect(tracker.slowMsFor('toString')).toBe(3000);
  });

  it('counts a completion as slow only past the bound, and one without a duration never', () => {
    expect(tracker.isSlow('embed', 3001)).toBe(true);
    expect(tracker.isSlow('embed', 3000)).toBe(false);
    expect(tracker.isSlow('summarise', 3001)).toBe(false);
    expect(tracker.isSlow('embed', undefined)).toBe(false);
  });

  it('records nothing for a completion without a duration', async () => {
    await expect(tracker.track('a1', 'embed', undefined)).resolves.toBeUndefined();
  });
});
