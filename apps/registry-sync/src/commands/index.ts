import { fileURLToPath } from 'node:url';
import type { Redis, Result } from 'ioredis';
import { defineScripts } from '@agent-reach/service-kit';

type Arg = string | number;

/** Scripts this service owns, typed (ioredis `defineCommand` + RedisCommander augmentation). */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    reachRegister(...args: Arg[]): Result<[number, number, number], Context>;
    reachHeartbeat(...args: Arg[]): Result<[number, string?, string?, number?], Context>;
    reachDeregister(...args: Arg[]): Result<[number, number?], Context>;
    reachLease(...args: Arg[]): Result<[string, string, number, number], Context>;
    reachAckAgent(...args: Arg[]): Result<[number, number?, string?, number?][], Context>;
    reachAckTask(
      ...args: Arg[]
    ): Result<
      [number, string?, string?, string?, number?, number?, number?, number?, number?],
      Context
    >;
    reachSnapshot(...args: Arg[]): Result<[number, number], Context>;
    reachLock(...args: Arg[]): Result<number, Context>;
    reachRetry(
      ...args: Arg[]
    ): Result<[number, number?, string?, string?, (number | string)?, string?], Context>;
    reachRelease(...args: Arg[]): Result<[number, string, string], Context>;
    reachSlow(...args: Arg[]): Result<number, Context>;
    reachSuspect(...args: Arg[]): Result<number, Context>;
    reachEject(...args: Arg[]): Result<number, Context>;
    reachDelConsumer(...args: Arg[]): Result<number, Context>;
    reachServe(...args: Arg[]): Result<number, Context>;
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
};

const dir = fileURLToPath(new URL('.', import.meta.url));

/** Defines this service's scripts on the connection, or only those named in `only` (`defineScripts`). */
export function defineCommands(redis: Redis, only?: readonly string[]): void {
  defineScripts(redis, dir, NAMES, only);
}
