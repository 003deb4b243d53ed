/**
 * True when an error comes from the Redis connection rather than from a command's logic:
 * connection refused or closed, a command timed out, the offline queue gave up, or (Redis
 * Cluster) a failover or reshard outlasted the client's retries: the slot map could not be
 * refreshed, redirections ran out, or a node answered CLUSTERDOWN, TRYAGAIN or LOADING.
 * ioredis reports these with these names, Node error codes and Redis' own reply prefixes;
 * nothing else here reads message text except ioredis' own fixed "Connection is closed.",
 * "Command timed out" and "Too many Cluster redirections." errors.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError' || err.name === 'ClusterAllFailedError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT')
    return true;
  if (err.name === 'ReplyError' && /^(CLUSTERDOWN|TRYAGAIN|LOADING) /.test(err.message))
    return true;
  return (
    err.message === 'Connection is closed.' ||
    err.message === 'Command timed out' ||
    err.message.startsWith('Too many Cluster redirections.')
  );
}

/**
 * PINGs `redis`, failing after `timeoutMs`: a readiness check answers 503 in time even where a
 * command would wait (a Redis Cluster client holds commands while no node answers).
 */
export async function pingWithin(
  redis: { ping(): Promise<unknown> },
  timeoutMs = 2000,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('Command timed out')), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
