import { describe, expect, it } from 'vitest';
import { cadenceProblem, latestTick, nextTick, type Cadence } from './ticks.ts';

const at = (iso: string) => Date.parse(iso);

describe('schedule ticks', () => {
  it('every_ms ticks at the anchor plus whole intervals', () => {
    const c: Cadence = { everyMs: 1000, anchorMs: 10_000 };
    expect(nextTick(c, 10_000)).toBe(11_000);
    expect(nextTick(c, 10_999)).toBe(11_000);
    expect(nextTick(c, 11_000)).toBe(12_000);
    expect(nextTick(c, 5_000)).toBe(10_000);
    // Missed ticks: the latest at or before now, never before the one known due.
    expect(latestTick(c, 11_000, 15_500)).toBe(15_000);
    expect(latestTick(c, 11_000, 11_000)).toBe(11_000);
  });

  it('cron ticks are read in the time zone', () => {
    const paris: Cadence = { cron: '0 9 * * *', timezone: 'Europe/Paris' };
    // 09:00 in Paris is 08:00 UTC in winter.
    expect(nextTick(paris, at('2026-12-01T10:00:00Z'))).toBe(at('2026-12-02T08:00:00Z'));
    const every5: Cadence = { cron: '*/5 * * * *', timezone: 'UTC' };
    expect(nextTick(every5, at('2026-12-01T20:30:00Z'))).toBe(at('2026-12-01T20:35:00Z'));
    expect(latestTick(every5, at('2026-12-01T20:30:00Z'), at('2026-12-01T20:47:10Z'))).toBe(
      at('2026-12-01T20:45:00Z'),
    );
  });

  it('names what is wrong with a cron expression or a time zone', () => {
    expect(cadenceProblem({ cron: '*/2 * * * * *', timezone: 'UTC' })).toBeUndefined();
    expect(cadenceProblem({ everyMs: 1000, anchorMs: 0 })).toBeUndefined();
    expect(cadenceProblem({ cron: 'every day', timezone: 'UTC' })).toMatch(/not valid/);
    expect(cadenceProblem({ cron: '* * * * *', timezone: 'Mars/Olympus' })).toMatch(
      /unknown time zone/,
    );
  });
});
