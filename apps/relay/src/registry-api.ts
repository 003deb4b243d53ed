import type {
  RedisCredentials,
  BatchBeat,
  BatchHeartbeatReply,
  EndpointRegisterBody,
  RegisterReply,
} from '@agent-reach/protocol';

/** A refusal from registry-sync: its status and error code. */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** What the registry client needs. */
export interface RegistryApiOptions {
  /** Base URL of registry-sync. */
  url: string;
  /** The relay's API key; none while keys are off. */
  key?: string;
  /** Longest request, ms. @default 10000 */
  timeoutMs?: number;
}

/** The relay's side of registry-sync's HTTP API: register, heartbeat and deregister agents it serves. */
export class RegistryApi {
  constructor(private readonly o: RegistryApiOptions) {}

  /** Registers the endpoint agent `agentId` as this relay's instance of it. */
  registerEndpoint(agentId: string, body: EndpointRegisterBody): Promise<RegisterReply> {
    return this.#post(`/v1/endpoints/${encodeURIComponent(agentId)}/register`, body, this.o.key);
  }

  /** One heartbeat for each agent in `beats` (each with its own token). */
  heartbeats(beats: BatchBeat[]): Promise<BatchHeartbeatReply> {
    return this.#post('/v1/agents/heartbeats', { beats });
  }

  /** A Redis user of this relay's own (registry-sync with REACH_AGENT_ACL=on); a new password each time. */
  redisCredentials(relayId: string): Promise<RedisCredentials> {
    return this.#post(`/v1/relays/${encodeURIComponent(relayId)}/redis`, undefined, this.o.key);
  }

  /** Deregisters an instance this relay served (the agent drains, then goes). */
  async deregister(agentId: string, token: string): Promise<void> {
    await this.#post(`/v1/agents/${encodeURIComponent(agentId)}/deregister`, undefined, token);
  }

  async #post<T>(path: string, body: unknown, bearer?: string): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await fetch(new URL(path, this.o.url), {
      method: 'POST',
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const err = (json ?? {}) as { error?: string; message?: string };
      throw new RegistryError(
        res.status,
        err.error ?? `HTTP_${res.status}`,
        `${path}: ${res.status} ${err.error ?? ''} ${err.message ?? text.slice(0, 200)}`.trim(),
      );
    }
    return json as T;
  }
}
