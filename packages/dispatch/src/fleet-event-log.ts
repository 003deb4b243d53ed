import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  FLEET_EVENT_FIELD,
  FLEET_EVENTS_MAXLEN,
  type FleetEvent,
  type ReachKeys,
} from '@agent-reach/protocol';

/** What the fleet event log needs. */
export interface FleetEventLogOptions {
  redis: RedisClient;
  keys: ReachKeys;
  logger: Logger;
}

/**
 * Appends fleet events to the capped events stream for live views. Fire and forget: a failed
 * append is logged, never thrown, so watching the fleet cannot slow or break dispatch.
 */
export class FleetEventLog {
  constructor(private readonly o: FleetEventLogOptions) {}

  /** Appends one event stamped now (or at `event.at`). */
  append(event: Omit<FleetEvent, 'at'> & { at?: number }): void {
    const full: FleetEvent = { ...event, at: event.at ?? Date.now() };
    this.o.redis
      .xadd(
        this.o.keys.fleetEvents(),
        'MAXLEN',
        '~',
        FLEET_EVENTS_MAXLEN,
        '*',
        FLEET_EVENT_FIELD,
        JSON.stringify(full),
      )
      .catch((err: unknown) => this.o.logger.debug({ err }, 'fleet event not written'));
  }
}
