import { describe, expect, it } from 'vitest';
import { RedisClock } from './redis-clock.ts';

describe('RedisClock', () => {
  it('reads Redis time from the times it was handed, keeping the highest offset a while', () => {
    let local = 1000;
    const clock = new RedisClock(() => local);
    expect(clock.now()).toBe(1000);
    clock.observe(1250);
    expect(clock.now()).toBe(1250);
    // A reply that came back late shows a lower offset: the higher one stays.
    local = 2000;
    clock.observe(2100);
    expect(clock.now()).toBe(2250);
    clock.observe(2300);
    expect(clock.now()).toBe(2300);
    // Past the keeping time a lower offset replaces it (the clocks drifted).
    local = 20_000;
    clock.observe(20_050);
    expect(clock.now()).toBe(20_050);
    clock.observe(0);
    expect(clock.now()).toBe(20_050);
  });
});
