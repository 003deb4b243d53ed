import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, isWaitTimeoutError, randomPrefix, waitFor } from './index.ts';

describe('waitFor', () => {
  it('resolves with the first truthy value', async () => {
    let n = 0;
    await expect(
      waitFor(() => (++n >= 3 ? `done after ${n}` : undefined), { intervalMs: 1 }),
    ).resolves.toBe('done after 3');
  });

  it('times out with its message', async () => {
    const err: unknown = await waitFor(() => false, {
      timeoutMs: 60,
      intervalMs: 10,
      message: 'the moon to rise',
    }).catch((e: unknown) => e);
    expect(isWaitTimeoutError(err)).toBe(true);
    expect((err as Error).message).toMatch(/^the moon to rise — timed out after 60 ms/);
  });

  it('treats a throwing probe as not yet, and reports its last error', async () => {
    const probe = () => Promise.reject(new Error('ECONNREFUSED'));
    await expect(
      waitFor(probe, { timeoutMs: 30, intervalMs: 5, message: 'server up' }),
    ).rejects.toThrow(/server up — timed out after 30 ms \(last error: ECONNREFUSED\)/);
  });
});

describe('randomPrefix', () => {
  it('is unique and valid for reachKeys', () => {
    const prefixes = new Set(Array.from({ length: 1000 }, () => randomPrefix()));
    expect(prefixes.size).toBe(1000);
    for (const p of prefixes) expect(p).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/);
  });
});

describe('freePort', () => {
  it('returns a port we can bind', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
