import { fileURLToPath } from 'node:url';
import type { Result } from 'ioredis';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { defineScripts } from '@agent-reach/service-kit';

type Arg = string | number;

/** Scripts this service owns, typed (ioredis `defineCommand` + RedisCommander augmentation). */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    reachClaim(...args: Arg[]): Result<number | unknown[], Context>;
    reachDeliver(...args: Arg[]): Result<unknown[], Context>;
    reachRecordPooled(...args: Arg[]): Result<string | null, Context>;
    reachReleaseClaim(...args: Arg[]): Result<number, Context>;
    reachMarkSeen(...args: Arg[]): Result<number, Context>;
    reachAssign(...args: Arg[]): Result<unknown[], Context>;
    reachUnassign(...args: Arg[]): Result<number, Context>;
    reachPublishCallback(...args: Arg[]): Result<(string | number)[], Context>;
    reachReject(...args: Arg[]): Result<number, Context>;
    reachReplay(...args: Arg[]): Result<unknown[], Context>;
    reachCancel(...args: Arg[]): Result<unknown[], Context>;
    reachHold(...args: Arg[]): Result<number, Context>;
    reachScheduleState(...args: Arg[]): Result<number, Context>;
    reachScheduleAdvance(...args: Arg[]): Result<number, Context>;
  }
}

const NAMES: Record<string, string> = {
  claim: 'reachClaim',
  deliver: 'reachDeliver',
  'record-pooled': 'reachRecordPooled',
  'release-claim': 'reachReleaseClaim',
  'mark-seen': 'reachMarkSeen',
  assign: 'reachAssign',
  unassign: 'reachUnassign',
  'publish-callback': 'reachPublishCallback',
  reject: 'reachReject',
  replay: 'reachReplay',
  cancel: 'reachCancel',
  hold: 'reachHold',
  'schedule-state': 'reachScheduleState',
  'schedule-advance': 'reachScheduleAdvance',
};

const dir = fileURLToPath(new URL('.', import.meta.url));

/** Defines this service's scripts on the connection, or only those named in `only` (`defineScripts`). */
export function defineCommands(redis: RedisClient, only?: readonly string[]): void {
  defineScripts(redis, dir, NAMES, only);
}
