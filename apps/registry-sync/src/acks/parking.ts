import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  encodeParked,
  parkedFieldsText,
  PARKED_MAXLEN,
  type ParkedSource,
  type ReachKeys,
} from '@agent-reach/protocol';

/** What is parked about one entry. */
export interface ParkRequest {
  source: ParkedSource;
  stream: string;
  entryId: string;
  fields: readonly unknown[] | null;
  reason: string;
}

/**
 * Sets a malformed entry aside in `keys.parked()` (capped at about PARKED_MAXLEN entries) and
 * counts it as `parked:<source>` in the stats hash, which `/metrics` exports. Never throws: a
 * failure to park is logged and the entry is still skipped, so one bad entry never holds up the
 * stream behind it.
 */
export async function parkEntry(
  redis: RedisClient,
  keys: ReachKeys,
  entry: ParkRequest,
  logger: Logger,
): Promise<void> {
  try {
    const fields = encodeParked({
      source: entry.source,
      stream: entry.stream,
      entry_id: entry.entryId,
      reason: entry.reason,
      fields: parkedFieldsText(entry.fields),
      by: 'registry-sync',
    });
    const parkedKey = keys.parked();
    const statsKey = keys.stats();
    await Promise.all([
      redis.xadd(parkedKey, 'MAXLEN', '~', PARKED_MAXLEN, '*', ...fields),
      redis.hincrby(statsKey, `parked:${entry.source}`, 1),
    ]);
  } catch (err: unknown) {
    logger.warn(
      { err, entry_id: entry.entryId, stream: entry.stream },
      'malformed entry not parked',
    );
  }
}
