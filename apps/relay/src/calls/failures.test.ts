import { describe, expect, it } from 'vitest';
import { clipText, httpStatusFailure, parseRetryAfter } from './failures.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-12-04T12:00:00Z');

  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Fri, 04 Dec 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 04 Dec 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('gives undefined for nothing or what is neither', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
    expect(parseRetryAfter('2026-12-04', now)).toBeUndefined();
  });
});

describe('httpStatusFailure', () => {
  it('makes 4xx not retryable, 408, 429 and 5xx retryable', () => {
    expect(httpStatusFailure(400, 'bad', null)).toEqual({
      kind: 'failed',
      code: 'HTTP_400',
      error: 'bad',
      retryable: false,
    });
    for (const status of [408, 429, 500, 502, 503])
      expect(httpStatusFailure(status, '', null)).toMatchObject({
        code: `HTTP_${status}`,
        error: `HTTP ${status}`,
        retryable: true,
      });
  });

  it('keeps Retry-After for 429 and 503 only', () => {
    expect(httpStatusFailure(429, '', '3').retryAfterMs).toBe(3000);
    expect(httpStatusFailure(503, '', '4').retryAfterMs).toBe(4000);
    expect(httpStatusFailure(500, '', '5')).not.toHaveProperty('retryAfterMs');
    expect(httpStatusFailure(429, '', 'never')).not.toHaveProperty('retryAfterMs');
  });

  it('keeps the first 500 characters of the body', () => {
    expect(httpStatusFailure(400, 'x'.repeat(600), null).error).toHaveLength(500);
    expect(clipText('short')).toBe('short');
  });
});
