import { Type, type Static } from '@sinclair/typebox';
import { ID_PATTERN } from './ids.ts';

/**
 * Endpoint agents (docs/ENDPOINTS.md): agents declared by URL instead of registering themselves.
 * registry-sync stores the declarations (`PUT /v1/endpoints/:agent_id`, or a file named by
 * `REACH_ENDPOINTS_FILE`); a relay (`apps/relay`) registers each one as a real agent instance and
 * makes the calls.
 */

/** How a relay calls an endpoint agent. */
export const ENDPOINT_PROTOCOLS = ['a2a', 'http', 'mcp'] as const;
export type EndpointProtocol = (typeof ENDPOINT_PROTOCOLS)[number];

const Id = (description: string) => Type.String({ pattern: ID_PATTERN, description });
const Url = (description: string) =>
  Type.String({ pattern: '^https?://', maxLength: 2048, description });

/** Bounds of an endpoint call's timeout, ms. */
export const ENDPOINT_TIMEOUT_MS = { min: 100, max: 3_600_000, default: 60_000 } as const;
/** Default `max_concurrency` of an endpoint agent. */
export const ENDPOINT_DEFAULT_CONCURRENCY = 4;

/** `PUT /v1/endpoints/:agent_id` body (also one entry of the endpoints file, with `agent_id`). */
export const EndpointBody = Type.Object(
  {
    protocol: Type.Union(
      ENDPOINT_PROTOCOLS.map((p) => Type.Literal(p)),
      { description: 'a2a, http or mcp: how the relay calls the agent' },
    ),
    url: Url('The agent: its A2A base URL, its HTTP endpoint, or its MCP Streamable HTTP URL'),
    capabilities: Type.Optional(
      Type.Array(Id('Capability name'), {
        minItems: 1,
        maxItems: 64,
        uniqueItems: true,
        description:
          'http: the capabilities served (required). a2a and mcp: restricts the discovered skills or tools to these (after the prefix)',
      }),
    ),
    capability_prefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:-]{1,64}$',
        description:
          'Prepended to discovered skill and tool names (`<prefix><name>`), so unrelated servers exposing the same name are not replicas',
      }),
    ),
    max_concurrency: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10000, default: ENDPOINT_DEFAULT_CONCURRENCY }),
    ),
    region: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
    tags: Type.Optional(Type.Array(Id('Routing tag'), { maxItems: 64, uniqueItems: true })),
    shared: Type.Optional(Type.Boolean({ description: 'Serve every tenant; operator keys only' })),
    meta: Type.Optional(
      // 30, not 32: the registration adds endpoint_protocol and endpoint_url to the agent's meta.
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 30 }),
    ),
    health_url: Type.Optional(
      Url('GET it for a full liveness check (2xx = alive); default: a TCP connect to `url`'),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: ENDPOINT_TIMEOUT_MS.min,
        maximum: ENDPOINT_TIMEOUT_MS.max,
        default: ENDPOINT_TIMEOUT_MS.default,
        description: 'Longest call; a call past it fails retryable (ENDPOINT_TIMEOUT)',
      }),
    ),
    headers: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }),
        Type.String({ maxLength: 4096 }),
        { maxProperties: 32, description: 'Sent with every call; stored as secrets, never shown' },
      ),
    ),
    bearer_secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'Sent as `Authorization: Bearer <secret>`; stored, never shown',
      }),
    ),
    options: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
        maxProperties: 32,
        description: 'Per protocol (docs/ENDPOINTS.md)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EndpointBody = Static<typeof EndpointBody>;

/** Where a declaration came from: the API (and CLI), or the endpoints file (read-only). */
export type EndpointSource = 'api' | 'file';

/**
 * A declaration as stored (`keys.endpoints()`, agent_id → JSON), without its secrets
 * (`keys.endpointSecrets()`). Read by relays straight from Redis.
 */
export interface EndpointRecord {
  agent_id: string;
  protocol: EndpointProtocol;
  url: string;
  /** As declared (absent: every discovered skill or tool). */
  capabilities?: string[];
  capability_prefix?: string;
  max_concurrency: number;
  region?: string;
  tags?: string[];
  shared: boolean;
  meta?: Record<string, unknown>;
  health_url?: string;
  timeout_ms: number;
  options?: Record<string, unknown>;
  /** The declaring key's tenant: the agent's. */
  tenant: string;
  /** The capabilities the declaring key covers (`['*']` for any): discovered ones must fit. */
  key_capabilities: string[];
  source: EndpointSource;
  /** Names of the stored headers (their values are secret). */
  header_names: string[];
  has_bearer_secret: boolean;
  created_at: number;
  updated_at: number;
}

/** What is kept apart from the record (`keys.endpointSecrets()`), never returned, never logged. */
export interface EndpointSecrets {
  headers?: Record<string, string>;
  bearer_secret?: string;
}

/** `PUT /v1/endpoints/:agent_id` reply and one item of `GET /v1/endpoints`. */
export const EndpointView = Type.Object({
  agent_id: Type.String(),
  protocol: Type.String(),
  url: Type.String(),
  capabilities: Type.Optional(Type.Array(Type.String())),
  capability_prefix: Type.Optional(Type.String()),
  max_concurrency: Type.Integer(),
  region: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  shared: Type.Boolean(),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  health_url: Type.Optional(Type.String()),
  timeout_ms: Type.Integer(),
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  tenant: Type.String(),
  source: Type.String(),
  header_names: Type.Array(Type.String()),
  has_bearer_secret: Type.Boolean(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type EndpointView = Static<typeof EndpointView>;

/** The record as the API shows it: everything but the declaring key's capabilities. */
export function endpointView(record: EndpointRecord): EndpointView {
  const { key_capabilities: _omit, ...view } = record;
  return view;
}

/** Parses a stored record; null for text that is not one. */
export function decodeEndpointRecord(text: string | null | undefined): EndpointRecord | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as EndpointRecord;
    if (typeof value !== 'object' || value === null) return null;
    if (typeof value.agent_id !== 'string' || typeof value.url !== 'string') return null;
    if (!ENDPOINT_PROTOCOLS.includes(value.protocol)) return null;
    return value;
  } catch {
    return null;
  }
}

/** `POST /v1/endpoints/:agent_id/register` body: a relay registers the agent it serves. */
export const EndpointRegisterBody = Type.Object(
  {
    instance_id: Id('The relay’s instance of this agent: `<relay_id>.<agent_id>` hashed or as is'),
    capabilities: Type.Array(Id('Capability name'), {
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
      description: 'What the relay found the agent serves (declared, or discovered and mapped)',
    }),
    input_schemas: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    card: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type EndpointRegisterBody = Static<typeof EndpointRegisterBody>;

/** One item of `POST /v1/agents/heartbeats`: a heartbeat of an agent a relay serves. */
export const BatchBeat = Type.Object(
  {
    agent_id: Id('Agent id'),
    token: Type.String({ minLength: 1, maxLength: 512, description: 'The agent’s token' }),
    inflight: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    ready: Type.Optional(Type.Boolean()),
    reachable: Type.Optional(
      Type.Boolean({
        description:
          'false: the agent did not answer its relay (SUSPECT at once); true: it answers again',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BatchBeat = Static<typeof BatchBeat>;

/** `POST /v1/agents/heartbeats` body. */
export const BatchHeartbeatBody = Type.Object(
  { beats: Type.Array(BatchBeat, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
export type BatchHeartbeatBody = Static<typeof BatchHeartbeatBody>;

/** One answer of `POST /v1/agents/heartbeats`, in the order of the beats. */
export const BatchBeatReply = Type.Object({
  agent_id: Type.String(),
  /** The error code when this beat was refused: AGENT_NOT_FOUND, STALE_EPOCH, UNAUTHORIZED. */
  error: Type.Optional(Type.String()),
  epoch: Type.Optional(Type.Integer()),
  status: Type.Optional(Type.String()),
  lease_ms: Type.Optional(Type.Integer()),
});
export type BatchBeatReply = Static<typeof BatchBeatReply>;

export const BatchHeartbeatReply = Type.Object({ acks: Type.Array(BatchBeatReply) });
export type BatchHeartbeatReply = Static<typeof BatchHeartbeatReply>;

/**
 * The failure code a relay reports when a call never reached its endpoint (connection refused
 * before the request was sent): registry-sync re-routes the task at once without spending one of
 * its attempts (at most `REACH_MAX_ATTEMPTS` such re-routes per task).
 */
export const ENDPOINT_UNREACHABLE = 'ENDPOINT_UNREACHABLE';

/**
 * The agent record field a relay's registration sets (`relay` = `1`): deliver-3.lua then
 * `SPUBLISH`es the agent's wake channel (`keys.wake()`) with every delivery, and a cancel notice
 * does the same, so a relay wakes without polling.
 */
export const RELAY_FIELD = 'relay';

/** Path parameters naming a relay. */
export const RelayParams = Type.Object({
  relay_id: Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,40}$', description: 'Relay id' }),
});
export type RelayParams = Static<typeof RelayParams>;
