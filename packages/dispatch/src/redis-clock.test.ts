import { describe, expect, it } from 'vitest';
import { RedisClock, timeReplyMs } from './redis-clock.ts';

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

  it('uses its own clock while a TIME it asked for shows Redis agrees, however late replies came', () => {
    let local = 1000;
    const clock = new RedisClock(() => local);
    // A burst: every reply came back 15 ms after Redis read its clock.
    clock.observe(985);
    expect(clock.now()).toBe(985);
    // Its own question, answered within the millisecond it asked: Redis's clock is this one.
    clock.observe(timeReplyMs(['1', '0400']), 1000);
    expect(clock.now()).toBe(1000);
    // Long after, with no reply since, a task is still created at this process's time.
    local = 60_000;
    expect(clock.now()).toBe(60_000);
  });

  it('errs early by a reply’s latency at most when Redis’s clock is 50 ms behind', () => {
    let local = 1000;
    const clock = new RedisClock(() => local);
    local = 1002;
    clock.observe(951.3, 1000);
    // Redis read its clock at 951.3 while this one read 1000 to 1002.999: Redis is now at least
    // at 950.3 (it read its clock as late as it could), which is what the clock says.
    expect(clock.now()).toBeCloseTo(950.3, 6);
  });

  it('follows Redis’s time by asking now and at every turn until stopped', async () => {
    const clock = new RedisClock();
    let asked = 0;
    clock.follow(() => {
      asked++;
      return Promise.resolve(Date.now() - 200);
    }, 10);
    await new Promise((r) => setTimeout(r, 55));
    clock.stop();
    const after = asked;
    expect(after).toBeGreaterThanOrEqual(3);
    expect(clock.now() - Date.now()).toBeLessThanOrEqual(-200);
    await new Promise((r) => setTimeout(r, 30));
    expect(asked).toBe(after);
  });
});
