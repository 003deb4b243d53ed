import type { RedisCredentials } from '@agent-reach/protocol';
import type { Redis } from 'ioredis';

/**
 * Makes a connection use the Redis credentials the registry issued to this instance
 * (REACH_AGENT_ACL=on) from its next connect on: the first, since the agent's connections connect
 * only once registered, or the next reconnect after the registry made the user again. A
 * connection already signed in keeps working: Redis keeps it when only the password changes.
 * The user may not run INFO, so ioredis' ready check (an INFO at every connect) is turned off.
 */
export function useCredentials(redis: Redis, credentials: RedisCredentials): void {
  redis.options.username = credentials.username;
  redis.options.password = credentials.password;
  redis.options.enableReadyCheck = false;
}

/**
 * Redis error codes a confined agent meets while its user is being made again (Redis restarted,
 * the agent back from OFFLINE): a write that fails with one is retried, not dropped.
 */
export const CREDENTIAL_ERROR_CODES: readonly string[] = ['WRONGPASS', 'NOAUTH'];
