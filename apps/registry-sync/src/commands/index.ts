import type { RedisClient } from '@agent-reach/service-kit/redis';
import { loadScripts } from '@agent-reach/service-kit';
import { retryScript } from '@agent-reach/dispatch';

/**
 * retry-2.lua is part of the task state machine and lives in packages/dispatch (src/task/,
 * `retryScript`); service.ts loads it with the dispatch scripts. This loads it for a test that
 * still names it here, and goes with that line.
 */
export function defineCommands(redis: RedisClient, only: readonly 'retry'[] = ['retry']): void {
  if (only.includes('retry')) loadScripts(redis, [retryScript]);
}
