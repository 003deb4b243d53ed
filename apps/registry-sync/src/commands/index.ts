import { readFileSync } from 'node:fs';
import type { Result } from 'ioredis';
import type { RedisClient } from '@agent-reach/service-kit/redis';

type Arg = string | number;

/**
 * This service's scripts are defined one per file beside their `.lua` (`defineScript` in
 * packages/service-kit: keys and arguments by name, the reply's decoder beside it, refusal codes
 * from the one map in packages/protocol script-replies.ts), e.g. ack-task.ts for ack-task-2.lua;
 * each connection loads the list of those it runs (`loadScripts`, service.ts). retry-2.lua alone
 * is still loaded from here by command name: tasks/outcomes.ts runs it through packages/dispatch's
 * `retryScript`, whose command is the same.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    reachRetry(
      ...args: Arg[]
    ): Result<[number, number?, string?, string?, (number | string)?, string?], Context>;
  }
}

/** Defines retry-2.lua as `reachRetry` on the connection. */
export function defineCommands(redis: RedisClient, only: readonly 'retry'[] = ['retry']): void {
  if (!only.includes('retry')) return;
  const lua = readFileSync(new URL('./retry-2.lua', import.meta.url), 'utf8');
  redis.defineCommand('reachRetry', { numberOfKeys: 2, lua });
}
