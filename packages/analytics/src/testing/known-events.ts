import { randomBytes } from 'node:crypto';
import { createEventSink, type TaskEvent } from '@agent-reach/events';
import { pino } from 'pino';

/** A name unique to one test (capability, agent or task), valid as an id and in InfluxQL. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

/**
 * Writes events through the real sink (v1 `/write`, nanosecond timestamps) and resolves once
 * InfluxDB acknowledged every one of them.
 * @throws when any point was dropped.
 */
export async function writeEvents(
  url: string,
  db: string,
  events: readonly TaskEvent[],
): Promise<void> {
  const sink = createEventSink({
    url,
    bucket: db,
    api: 'v1',
    flushIntervalMs: 60_000,
    batchSize: 10_000,
    logger: pino({ level: 'silent' }),
  });
  for (const e of events) sink.write(e);
  await sink.flush();
  const stats = sink.stats();
  await sink.close();
  if (stats.written !== events.length) {
    throw new Error(`wrote ${stats.written} of ${events.length} events (dropped ${stats.dropped})`);
  }
}

/** Evenly spread times between `fromMsAgo` and `toMsAgo` before now, oldest first. */
export function spread(n: number, fromMsAgo: number, toMsAgo: number, now = Date.now()): number[] {
  const step = n > 1 ? (fromMsAgo - toMsAgo) / (n - 1) : 0;
  return Array.from({ length: n }, (_, i) => Math.round(now - fromMsAgo + i * step));
}
