import pino from 'pino';
import { SnapshotHolder } from '@agent-reach/dispatch';
import type { ReachKeys } from '@agent-reach/protocol';
import type { RedisClient } from '@agent-reach/service-kit/redis';

/**
 * The registry as a router sees it now: the full snapshot and the deltas after it, applied by a
 * router's own `SnapshotHolder` (read once; it follows nothing).
 */
export async function routerRegistry(redis: RedisClient, keys: ReachKeys): Promise<SnapshotHolder> {
  const holder = new SnapshotHolder({
    redis,
    subscriber: redis,
    keys,
    intervalMs: 60_000,
    logger: pino({ level: 'silent' }),
  });
  await holder.reload();
  return holder;
}
