import { describe, expect, it } from 'vitest';
import { compileClientOptions } from './options.ts';

describe('compileClientOptions', () => {
  it('fills in every default', () => {
    const o = compileClientOptions();
    expect(o).toMatchObject({
      routerUrl: 'http://127.0.0.1:8081',
      requestTimeoutMs: 10_000,
      pollWaitMs: 10_000,
      pollLimit: 100,
      maxBufferedResults: 1000,
      resultTimeoutMs: 300_000,
      pollRetry: { baseMs: 250, capMs: 5000, jitter: 0.2 },
      submitRetry: { baseMs: 100, capMs: 2000, jitter: 0.2 },
      submitMaxAttempts: 8,
      submitRetryTimeoutMs: 30_000,
    });
    expect(o.callbackTopic).toMatch(/^client-[0-9a-f-]{36}$/);
  });

  it('rejects a topic that is not an id, and a long poll past 30 s', () => {
    expect(() => compileClientOptions({ callbackTopic: '{x}' })).toThrow(/callbackTopic/);
    expect(() => compileClientOptions({ pollWaitMs: 30_001 })).toThrow(/pollWaitMs/);
    expect(() => compileClientOptions({ submitMaxAttempts: 0 })).toThrow(/submitMaxAttempts/);
  });
});
