import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkRedisAnswers } from './redis-check.ts';
import { testServices } from './index.ts';

/** A port nothing listens on: bound, then closed. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 1;
}

describe('checkRedisAnswers', () => {
  it('fails within its deadline naming the address when nothing answers', async () => {
    const url = `redis://127.0.0.1:${await deadPort()}`;
    const started = Date.now();
    await expect(checkRedisAnswers(url, 'REDIS_URL', 2000)).rejects.toThrow(
      `REDIS_URL=${url} did not answer within 2 s`,
    );
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('resolves at once for the run’s Redis', async () => {
    await checkRedisAnswers(testServices().redisUrl);
  });
});
