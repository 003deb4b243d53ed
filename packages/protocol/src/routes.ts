import type { CallbackQuery } from './schemas.ts';

/** Path segments are URL-encoded; valid ids (`ID_PATTERN`) pass through unchanged. */
const seg = (value: string): string => encodeURIComponent(value);

/**
 * HTTP paths of the Agent-Reach API, as a client calls them: constants for fixed paths,
 * functions for paths with parameters. Written once here so a client and the docs cannot drift
 * from the servers (a path typo otherwise only shows as a 404 at run time).
 */
export const ROUTES = {
  /** registry-sync: `POST` an agent's registration. */
  register: '/v1/agents/register',
  /** registry-sync: `POST` a heartbeat (bearer token of the registration). */
  heartbeat: (agentId: string): string => `/v1/agents/${seg(agentId)}/heartbeat`,
  /** registry-sync: `POST` a graceful deregistration (bearer token of the registration). */
  deregister: (agentId: string): string => `/v1/agents/${seg(agentId)}/deregister`,
  /** registry-sync: `POST` many agents' heartbeats, each with its own token (a relay's). */
  heartbeats: '/v1/agents/heartbeats',
  /** registry-sync: `GET` the declared endpoint agents the key sees. */
  endpoints: '/v1/endpoints',
  /** registry-sync: `PUT` (declare or replace), `GET` or `DELETE` one endpoint agent. */
  endpoint: (agentId: string): string => `/v1/endpoints/${seg(agentId)}`,
  /** registry-sync: `POST` a relay's registration of the endpoint agent it serves. */
  endpointRegister: (agentId: string): string => `/v1/endpoints/${seg(agentId)}/register`,
  /** router: `POST` a task. */
  submit: '/v1/tasks',
  /** router: `POST` many tasks in one request. */
  submitBatch: '/v1/tasks/batch',
  /** router: `GET` a task's state and timeline. */
  task: (taskId: string): string => `/v1/tasks/${seg(taskId)}`,
  /** router: `GET` a task's stages, progress and output as server-sent events. */
  taskEvents: (taskId: string): string => `/v1/tasks/${seg(taskId)}/events`,
  /** router: `GET` a page of a callback topic (long poll with `wait_ms`). */
  callbacks: (topic: string, query: CallbackQuery = {}): string => {
    const params = new URLSearchParams();
    if (query.after !== undefined) params.set('after', query.after);
    if (query.wait_ms !== undefined) params.set('wait_ms', String(query.wait_ms));
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    const qs = params.toString();
    return `/v1/callbacks/${seg(topic)}${qs === '' ? '' : `?${qs}`}`;
  },
  /** router: `POST` a new API key, `GET` the list (operator). */
  keys: '/v1/keys',
  /** router: `DELETE` (revoke) an API key (operator). */
  key: (keyId: string): string => `/v1/keys/${seg(keyId)}`,
  /** router: `GET` every tenant's record (operator). */
  tenants: '/v1/tenants',
  /** router: `PUT` (partial update) or `GET` one tenant's record (operator). */
  tenant: (tenant: string): string => `/v1/tenants/${seg(tenant)}`,
} as const;
