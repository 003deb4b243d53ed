/**
 * HTTP paths of the Agent-Reach API that the SDK calls. Kept in this one module so a path is
 * written once; ids are URL-encoded (they are already restricted to `[A-Za-z0-9_.:-]`).
 */
export const Routes = {
  register: () => '/v1/agents/register',
  heartbeat: (agentId: string) => `/v1/agents/${encodeURIComponent(agentId)}/heartbeat`,
  deregister: (agentId: string) => `/v1/agents/${encodeURIComponent(agentId)}/deregister`,
  submit: () => '/v1/tasks',
  task: (taskId: string) => `/v1/tasks/${encodeURIComponent(taskId)}`,
  callbacks: (topic: string, query: { after: string; waitMs: number; limit: number }) =>
    `/v1/callbacks/${encodeURIComponent(topic)}?${new URLSearchParams({
      after: query.after,
      wait_ms: String(query.waitMs),
      limit: String(query.limit),
    }).toString()}`,
} as const;
