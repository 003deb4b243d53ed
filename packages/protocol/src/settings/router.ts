import type { SettingsTable } from './define.ts';
import { backpressureFrom, DEFAULT_PORTS, hostListFrom, WINDOW_PATTERN } from './formats.ts';

/**
 * The router's own settings, one row each (define.ts), in the order its environment schema has
 * always listed them; with {@link SHARED_SETTINGS} they are `RouterOptions`.
 */
export const ROUTER_SETTINGS = {
  port: {
    env: 'ROUTER_PORT',
    type: 'integer',
    minimum: 0,
    maximum: 65535,
    default: DEFAULT_PORTS.router,
    essential: true,
    doc: 'Port of the router: the callers’ side of the HTTP API, the console, A2A and MCP.',
  },
  maxPayloadBytes: {
    env: 'REACH_MAX_PAYLOAD_BYTES',
    type: 'integer',
    minimum: 1024,
    default: 1_048_576,
    doc: 'Largest task payload once serialised; a larger one gets 413 `PAYLOAD_TOO_LARGE`.',
  },
  defaultTimeoutS: {
    env: 'REACH_DEFAULT_TIMEOUT_S',
    type: 'integer',
    minimum: 0,
    default: 0,
    doc: 'Task timeout when the caller gives none; 0 for none.',
  },
  maxCandidates: {
    env: 'REACH_MAX_CANDIDATES',
    type: 'integer',
    minimum: 1,
    default: 3,
    doc: 'Agents tried per submission before `NO_AGENT`.',
  },
  callbackConnections: {
    env: 'REACH_CALLBACK_CONNECTIONS',
    type: 'integer',
    minimum: 1,
    default: 64,
    doc: 'Redis connections for the long polls of callback topics.',
  },
  eventsConnections: {
    env: 'REACH_EVENTS_CONNECTIONS',
    type: 'integer',
    minimum: 1,
    maximum: 10_000,
    default: 16,
    doc: 'Redis connections for the live tails of `GET /v1/tasks/:id/events` (one blocking read of at most a second per follower); followers beyond them take turns.',
  },
  maxHops: {
    env: 'REACH_MAX_HOPS',
    type: 'integer',
    minimum: 1,
    default: 10,
    doc: 'Loop guard: hops past which a task submitted during another’s handling is a loop.',
  },
  childMarginMs: {
    env: 'REACH_CHILD_MARGIN_MS',
    type: 'integer',
    minimum: 0,
    maximum: 3_600_000,
    default: 5000,
    doc: 'A child task’s deadline is its parent’s less this; a parent with this or less left gets 409 `PARENT_DEADLINE_NEAR`.',
  },
  timelineLookback: {
    env: 'REACH_TIMELINE_LOOKBACK',
    type: 'string',
    pattern: WINDOW_PATTERN,
    default: '30d',
    doc: 'How far back a task’s timeline is looked for in InfluxDB once its Redis state expired.',
  },
  storeTimeoutMs: {
    env: 'REACH_STORE_TIMEOUT_MS',
    type: 'integer',
    minimum: 50,
    default: 800,
    doc: 'A Redis command unanswered this long fails the request with 503 `STORE_UNAVAILABLE`.',
  },
  backpressure: {
    env: 'REACH_BACKPRESSURE',
    type: 'parsed',
    format: 'JSON object, e.g. `{"embed": "queue"}`',
    parse: backpressureFrom,
    default: {},
    doc: 'Per capability, when every agent is at capacity: `"queue"` in the pool or `"reject"` with 429; `{}` rejects.',
  },
  admissionWaitMs: {
    env: 'REACH_ADMISSION_WAIT_MS',
    type: 'integer',
    minimum: 0,
    maximum: 60_000,
    default: 200,
    doc: 'How long a submission that finds every agent full waits for a free slot before that; 0 answers at once.',
  },
  poolWaitMs: {
    env: 'REACH_POOL_WAIT_MS',
    type: 'integer',
    minimum: 100,
    default: 300_000,
    doc: 'How long a pooled task without `timeout_s` waits for an agent.',
  },
  keyRatePerS: {
    env: 'REACH_KEY_RATE_PER_S',
    type: 'integer',
    minimum: 0,
    default: 0,
    doc: 'Requests per second of a key whose record sets no `rate_per_s`, across every router (while auth is off, per client address); 0: no limit.',
  },
  keyMaxInflight: {
    env: 'REACH_KEY_MAX_INFLIGHT',
    type: 'integer',
    minimum: 0,
    default: 0,
    doc: 'Tasks in flight of a key whose record sets no `max_inflight` (not counted while auth is off); 0: no limit.',
  },
  a2aPushHosts: {
    env: 'REACH_A2A_PUSH_HOSTS',
    type: 'parsed',
    format: 'host names, comma-separated',
    parse: hostListFrom,
    default: [],
    doc: 'Hosts an A2A push-notification URL may name, and loopback ones as `REACH_OUTBOUND_LOOPBACK` allows; a webhook is sent nowhere else (docs/A2A.md).',
  },
} as const satisfies SettingsTable;
