import type { FastifyBaseLogger } from 'fastify';
import { influxSourceFrom, parseWindow, type InfluxSource } from '@agent-reach/analytics';
import { isInfluxQueryError, type EventSinkOptions } from '@agent-reach/events';
import { httpError } from '@agent-reach/service-kit';

/** What the stats and timeline routes need to read task events back from InfluxDB. */
export interface EventsReader {
  /** The InfluxDB the events sink writes to; `undefined` when `INFLUX_URL` is not set. */
  influx: InfluxSource | undefined;
  /** How far back a timeline is looked for in InfluxDB once its Redis state expired, e.g. `30d`. */
  timelineLookback: string;
}

/**
 * Reads go to the same InfluxDB, database and token as the events sink's writes.
 * @throws InvalidWindowError at start-up when `timelineLookback` is not a window of at most 31d.
 */
export function createEventsReader(
  events: EventSinkOptions | undefined,
  timelineLookback: string,
): EventsReader {
  parseWindow(timelineLookback);
  return { influx: influxSourceFrom(events), timelineLookback };
}

/**
 * The reply for a failed InfluxDB read: `503 EVENTS_UNAVAILABLE` when InfluxDB is down, slow or
 * refuses the query (logged as a warning); any other error is rethrown as it is (a bug → 500).
 */
export function eventsUnavailable(err: unknown, log: FastifyBaseLogger): Error {
  if (!isInfluxQueryError(err)) return err instanceof Error ? err : new Error(String(err));
  log.warn({ err, status: err.status }, 'InfluxDB read failed');
  return httpError(
    'EVENTS_UNAVAILABLE',
    `InfluxDB did not answer the events query: ${err.message.slice(0, 200)}`,
  );
}

/** The reply when InfluxDB is not configured on this router. */
export function eventsNotConfigured(): Error {
  return httpError(
    'EVENTS_UNAVAILABLE',
    'InfluxDB is not configured on this router: set INFLUX_URL (and INFLUX_BUCKET)',
  );
}
