import { fileURLToPath } from 'node:url';
import type { Result } from 'ioredis';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { defineScripts } from '@agent-reach/service-kit';

type Arg = string | number;

/** The health module's scripts (health/commands/*.lua), beside the code that owns their fields. */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    reachOutcomes(...args: Arg[]): Result<unknown, Context>;
    reachDegrade(...args: Arg[]): Result<unknown, Context>;
    reachRecover(...args: Arg[]): Result<unknown, Context>;
  }
}

const NAMES: Record<string, string> = {
  outcomes: 'reachOutcomes',
  degrade: 'reachDegrade',
  recover: 'reachRecover',
};

const dir = fileURLToPath(new URL('./commands', import.meta.url));

/** Defines the health scripts on the connection. */
export function defineHealthCommands(redis: RedisClient): void {
  defineScripts(redis, dir, NAMES);
}

/** outcomes-1.lua's reply. */
export interface OutcomesReply {
  /** The agent turned SUSPECT now (failed probes in a row). */
  suspected: boolean;
  /** A passed probe ended its failed-probe SUSPECT. */
  cleared: boolean;
  /** Its status before the call ('' when gone). */
  previous: string;
}

/** Decodes outcomes-1.lua's reply. */
export function decodeOutcomesReply(raw: unknown): OutcomesReply {
  if (!Array.isArray(raw) || raw.length < 3)
    throw new Error(`outcomes-1.lua: unexpected reply ${JSON.stringify(raw)}`);
  const [suspected, cleared, previous] = raw as [number, number, string];
  return { suspected: suspected === 1, cleared: cleared === 1, previous: String(previous) };
}
