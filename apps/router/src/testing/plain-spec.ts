import type { TaskSpec } from '@agent-reach/dispatch';

/** A task of `capability` with nothing but its id: no topic, constraints, tenant or priority. */
export function plainSpec(taskId: string, capability = 'echo'): TaskSpec {
  return {
    taskId,
    capability,
    payload: '{}',
    callbackTopic: '',
    traceId: '',
    tags: [],
    region: '',
    regionPolicy: 'prefer',
    sessionId: '',
    parentTaskId: '',
    hops: 0,
    traceAgents: [],
    tenant: '',
    priority: 0,
  };
}
