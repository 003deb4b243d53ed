import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  FLEET_EVENT_FIELD,
  FLEET_EVENTS_MAXLEN,
  type FleetEvent,
  type ReachKeys,
} from '@agent-reach/protocol';

/**
 * Appends fleet events to the capped events stream for live views. Fire and forget: a failed
 * append is logged, never thrown, so watching the fleet cannot slow or break dispatch.
 */
export class FleetEventLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
    private readonly log: Logger,
  ) {}

  /** Appends one event stamped now (or at `event.at`). */
  append(event: Omit<FleetEvent, 'at'> & { at?: number }): void {
    const full: FleetEvent = { ...event, at: event.at ?? Date.now() };
    this.redis
      .xadd(
        this.keys.fleetEvents(),
        'MAXLEN',
        '~',
        FLEET_EVENTS_MAXLEN,
        '*',
        FLEET_EVENT_FIELD,
        JSON.stringify(full),
      )
      .catch((err: unknown) => this.log.debug({ err }, 'fleet event not written'));
  }
}
