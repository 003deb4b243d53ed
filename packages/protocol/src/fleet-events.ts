/**
 * Fleet events: what operators watch live (the console's event stream). Written by
 * registry-sync to one capped stream, `keys.fleetEvents()`, as a single `event` field of JSON.
 */
export const FLEET_EVENT_KINDS = [
  'registered',
  'deregistered',
  'status',
  'fenced',
  'retried',
  'dead',
  'replayed',
  'ejected',
  'dependency',
] as const;
export type FleetEventKind = (typeof FLEET_EVENT_KINDS)[number];

/** One fleet event. `at` is epoch ms. */
export interface FleetEvent {
  kind: FleetEventKind;
  at: number;
  agent_id?: string;
  task_id?: string;
  capability?: string;
  /** Previous and new agent status, for `status`. */
  from?: string;
  to?: string;
  reason?: string;
  attempt?: number;
  epoch?: number;
  /** `dependency`: the dependency flagged, `down` or `up`, and the agents it failed on. */
  dependency?: string;
  state?: 'down' | 'up';
  agents?: string[];
}

/** The stream field holding the JSON. */
export const FLEET_EVENT_FIELD = 'event';

/** Approximate number of fleet events kept. */
export const FLEET_EVENTS_MAXLEN = 10000;

/** Decodes a fleet-event stream entry; undefined when unreadable. */
export function decodeFleetEvent(fields: readonly string[]): FleetEvent | undefined {
  const i = fields.indexOf(FLEET_EVENT_FIELD);
  if (i < 0 || i % 2 !== 0) return undefined;
  try {
    const value = JSON.parse(fields[i + 1] ?? '') as FleetEvent;
    return typeof value.kind === 'string' && typeof value.at === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}
