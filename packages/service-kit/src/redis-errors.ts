/**
 * True when an error comes from the Redis connection rather than from a command's logic:
 * connection refused or closed, a command timed out, or the offline queue gave up.
 * ioredis reports these with these names and Node error codes; nothing here reads message text
 * except ioredis' own fixed "Connection is closed." and "Command timed out" errors.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT')
    return true;
  return err.message === 'Connection is closed.' || err.message === 'Command timed out';
}
