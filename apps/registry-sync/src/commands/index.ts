import { fileURLToPath } from 'node:url';
import type { Result } from 'ioredis';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { defineScripts } from '@agent-reach/service-kit';

export * from './refusals.ts';
export * from './replies.ts';

type Arg = string | number;

/**
 * Scripts this service owns (ioredis `defineCommand` + RedisCommander augmentation). Their replies
 * are `unknown` here: each is decoded by its `decodeXxxReply` in replies.ts, with the one map of
 * refusal codes in refusals.ts. (lease and snapshot still carry their raw tuple types until their
 * callers decode them; retry belongs to the retry path.)
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    reachRegister(...args: Arg[]): Result<unknown, Context>;
    reachHeartbeat(...args: Arg[]): Result<unknown, Context>;
    reachDeregister(...args: Arg[]): Result<unknown, Context>;
    reachLease(...args: Arg[]): Result<unknown, Context>;
    reachAckAgent(...args: Arg[]): Result<unknown, Context>;
    reachAckTask(...args: Arg[]): Result<unknown, Context>;
    reachSnapshot(...args: Arg[]): Result<unknown, Context>;
    reachLock(...args: Arg[]): Result<unknown, Context>;
    reachRetry(
      ...args: Arg[]
    ): Result<[number, number?, string?, string?, (number | string)?, string?], Context>;
    reachRelease(...args: Arg[]): Result<unknown, Context>;
    reachSlow(...args: Arg[]): Result<unknown, Context>;
    reachSuspect(...args: Arg[]): Result<unknown, Context>;
    reachEject(...args: Arg[]): Result<unknown, Context>;
    reachDelConsumer(...args: Arg[]): Result<unknown, Context>;
    reachServe(...args: Arg[]): Result<unknown, Context>;
    reachRequeue(...args: Arg[]): Result<unknown, Context>;
    reachRenew(...args: Arg[]): Result<unknown, Context>;
    reachOutput(...args: Arg[]): Result<unknown, Context>;
  }
}

const NAMES: Record<string, string> = {
  register: 'reachRegister',
  heartbeat: 'reachHeartbeat',
  deregister: 'reachDeregister',
  lease: 'reachLease',
  'ack-agent': 'reachAckAgent',
  'ack-task': 'reachAckTask',
  snapshot: 'reachSnapshot',
  lock: 'reachLock',
  retry: 'reachRetry',
  release: 'reachRelease',
  slow: 'reachSlow',
  suspect: 'reachSuspect',
  eject: 'reachEject',
  delconsumer: 'reachDelConsumer',
  serve: 'reachServe',
  requeue: 'reachRequeue',
  renew: 'reachRenew',
  output: 'reachOutput',
};

const dir = fileURLToPath(new URL('.', import.meta.url));

/** Defines this service's scripts on the connection, or only those named in `only` (`defineScripts`). */
export function defineCommands(redis: RedisClient, only?: readonly string[]): void {
  defineScripts(redis, dir, NAMES, only);
}
