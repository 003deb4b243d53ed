import { Redis } from 'ioredis';

/**
 * Resolves once the Redis at `url` answers PING (an error reply such as NOAUTH counts: something
 * that speaks Redis is there), trying again until `timeoutMs` has passed; then rejects with a
 * message that names the address and what the last attempt met. A test run given a dead
 * REDIS_URL stops here within seconds instead of waiting in every test.
 */
export async function checkRedisAnswers(
  url: string,
  what = 'REDIS_URL',
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const left = Math.max(200, deadline - Date.now());
    const conn = new Redis(url, {
      lazyConnect: true,
      connectTimeout: Math.min(2000, left),
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    conn.on('error', () => {});
    try {
      await conn.connect();
      await conn.ping();
      return;
    } catch (err: unknown) {
      if (err instanceof Error && err.name === 'ReplyError') return;
      last = err instanceof Error ? err.message : String(err);
    } finally {
      conn.disconnect();
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))),
    );
  }
  throw new Error(
    `${what}=${url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@')} did not answer within ${Math.round(timeoutMs / 1000)} s (${last})`,
  );
}
