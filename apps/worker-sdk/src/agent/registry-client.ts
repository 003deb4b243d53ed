import {
  AgentAck,
  RegisterReply,
  ROUTES,
  type HeartbeatBody,
  type RegisterRequest,
} from '@agent-reach/protocol';
import { checkReply } from '../util/check.ts';
import { joinUrl, requestOk } from '../util/http.ts';

/** The agents' side of the registry-sync HTTP API. Every method rejects with a typed SDK error. */
export class RegistryClient {
  /**
   * @param baseUrl - registry-sync base URL
   * @param timeoutMs - timeout of each request
   * @param apiKey - the agent key sent when registering (later calls carry the agent's token)
   */
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly apiKey?: string,
  ) {}

  /** `POST /v1/agents/register` with the API key. */
  async register(body: RegisterRequest, signal?: AbortSignal): Promise<RegisterReply> {
    const url = joinUrl(this.baseUrl, ROUTES.register);
    const reply = await requestOk({
      method: 'POST',
      url,
      body,
      timeoutMs: this.timeoutMs,
      signal,
      ...(this.apiKey !== undefined ? { token: this.apiKey } : {}),
    });
    return checkReply(RegisterReply, `POST ${url}`, reply);
  }

  /** `POST /v1/agents/:agent_id/heartbeat` with the registration's token. */
  async heartbeat(session: RegisterReply, body: HeartbeatBody): Promise<AgentAck> {
    const url = joinUrl(this.baseUrl, ROUTES.heartbeat(session.agent_id));
    const reply = await requestOk({
      method: 'POST',
      url,
      body,
      token: session.token,
      timeoutMs: this.timeoutMs,
    });
    return checkReply(AgentAck, `POST ${url}`, reply);
  }

  /** `POST /v1/agents/:agent_id/deregister` with the registration's token. */
  async deregister(session: RegisterReply): Promise<void> {
    const url = joinUrl(this.baseUrl, ROUTES.deregister(session.agent_id));
    await requestOk({
      method: 'POST',
      url,
      body: {},
      token: session.token,
      timeoutMs: this.timeoutMs,
    });
  }
}
