import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS } from '@agent-reach/protocol';
import { delayedUntil } from './delay.ts';

const now = 1_800_000_000_000;
const body = { capability: 'echo', payload: null };

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err: unknown) {
    return (err as { code?: unknown }).code;
  }
  return undefined;
}

describe('delayedUntil', () => {
  it('is the due time of a delay_ms or a run_at in the future', () => {
    expect(delayedUntil({ ...body, delay_ms: 2000 }, now)).toBe(now + 2000);
    expect(delayedUntil({ ...body, run_at: now + 5 }, now)).toBe(now + 5);
  });

  it('sends at once without a delay, with delay_ms 0, or with a run_at not in the future', () => {
    expect(delayedUntil(body, now)).toBeUndefined();
    expect(delayedUntil({ ...body, delay_ms: 0 }, now)).toBeUndefined();
    expect(delayedUntil({ ...body, run_at: now }, now)).toBeUndefined();
    expect(delayedUntil({ ...body, run_at: 0 }, now)).toBeUndefined();
  });

  it('refuses both at once, a run_at past 30 days, and a delay with a pool (INVALID_DELAY)', () => {
    expect(codeOf(() => delayedUntil({ ...body, delay_ms: 1, run_at: now + 1 }, now))).toBe(
      'INVALID_DELAY',
    );
    expect(codeOf(() => delayedUntil({ ...body, run_at: now + MAX_DELAY_MS + 1 }, now))).toBe(
      'INVALID_DELAY',
    );
    expect(delayedUntil({ ...body, run_at: now + MAX_DELAY_MS }, now)).toBe(now + MAX_DELAY_MS);
    expect(codeOf(() => delayedUntil({ ...body, delay_ms: 10, mode: 'batch' }, now))).toBe(
      'INVALID_DELAY',
    );
    expect(codeOf(() => delayedUntil({ ...body, delay_ms: 10, on_no_agent: 'queue' }, now))).toBe(
      'INVALID_DELAY',
    );
  });
});
