import type { EndpointProtocol } from '@agent-reach/protocol';

/** One endpoint agent as a relay calls it: its declaration with its secrets applied. */
export interface EndpointTarget {
  agentId: string;
  protocol: EndpointProtocol;
  url: string;
  /** Longest call, ms. */
  timeoutMs: number;
  /** Sent with every call and probe: the declared headers, plus `Authorization` from a bearer secret. */
  headers: Record<string, string>;
  /** Per protocol (docs/ENDPOINTS.md). */
  options: Record<string, unknown>;
  /** GET for a full liveness check; absent: the protocol's own (card fetch, MCP ping, TCP connect). */
  healthUrl?: string;
}

/** One task attempt to run on the endpoint. */
export interface CallRequest {
  /** The task's id as delivered (`<tenant>/<id>` for a tenant's task). */
  taskId: string;
  attempt: number;
  /** The capability as routed. */
  capability: string;
  /** The skill or tool name as the endpoint knows it (the capability for `http`). */
  remoteName: string;
  /** The task's payload, parsed. */
  payload: unknown;
  /** Epoch ms after which the result is not wanted; 0 for none. */
  deadlineMs: number;
  /** Aborted on cancel (reason `'cancelled'`) or when the relay stops (`'shutdown'`). */
  signal: AbortSignal;
  /** A progress value (A2A status update, MCP progress notification). */
  onProgress(value: unknown): void;
  /** An output chunk (A2A artifact chunk, SSE event of an HTTP endpoint). */
  onChunk(value: unknown): void;
}

/** How a call ended. */
export type CallOutcome =
  | { kind: 'completed'; result: unknown }
  | {
      kind: 'failed';
      /** `^[A-Z][A-Z0-9_]{0,63}$`: HTTP_<status>, ENDPOINT_TIMEOUT, ENDPOINT_UNREACHABLE, … */
      code: string;
      error: string;
      retryable: boolean;
      /** 429/503 with Retry-After: hold the agent's slots this long. */
      retryAfterMs?: number;
      /** The request never reached the endpoint (connection refused before it was sent). */
      unreachable?: boolean;
    };

/** A skill or tool an endpoint says it serves. */
export interface DiscoveredCapability {
  /** The name as the endpoint knows it. */
  remoteName: string;
  /** Its input schema (MCP tools), when known. */
  inputSchema?: Record<string, unknown>;
}

/** What the relay learns of an endpoint by asking it. */
export interface Discovery {
  capabilities: DiscoveredCapability[];
  /** The A2A AgentCard as fetched, when the protocol has one. */
  card?: Record<string, unknown>;
}

/** A protocol's client for one endpoint agent. */
export interface EndpointClient {
  /** Runs one attempt. Never throws: every failure is a {@link CallOutcome}. */
  call(req: CallRequest): Promise<CallOutcome>;
  /** Asks the endpoint what it serves (a2a: the AgentCard's skills; mcp: tools/list). */
  discover(): Promise<Discovery>;
  /** A full liveness check: true when the endpoint answered as it should. */
  probe(signal: AbortSignal): Promise<boolean>;
  /** Drops connections and sessions. */
  close(): Promise<void>;
}
