import type { RedisCredentials } from '@agent-reach/protocol';
import { isCluster, type RedisClient } from '@agent-reach/service-kit/redis';

/**
 * Makes a connection use the Redis credentials the registry issued to this instance
 * (REACH_AGENT_ACL=on) from its next connect on: the first, since the agent's connections connect
 * only once registered, or the next reconnect after the registry made the user again. A
 * connection already signed in keeps working: Redis keeps it when only the password changes.
 * The user may not run INFO, so ioredis' ready check (an INFO at every connect) is turned off.
 */
export function useCredentials(redis: RedisClient, credentials: RedisCredentials): void {
  if (!isCluster(redis)) {
    redis.options.username = credentials.username;
    redis.options.password = credentials.password;
    redis.options.enableReadyCheck = false;
    return;
  }
  // A Cluster makes its node connections from `redisOptions`; those it made already are told too.
  redis.options.redisOptions = {
    ...redis.options.redisOptions,
    username: credentials.username,
    password: credentials.password,
    enableReadyCheck: false,
  };
  redis.options.enableReadyCheck = false;
  for (const node of redis.nodes('all')) useCredentials(node, credentials);
}

/**
 * Redis error codes a confined agent meets while its user is being made again (Redis restarted,
 * the agent back from OFFLINE): a write that fails with one is retried, not dropped.
 */
export const CREDENTIAL_ERROR_CODES: readonly string[] = ['WRONGPASS', 'NOAUTH'];
