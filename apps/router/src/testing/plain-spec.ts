import { NO_CONSTRAINTS, type TaskSpec } from '@agent-reach/dispatch';

/** A task of `capability` with nothing but its id: no topic, constraints, tenant or priority. */
export function plainSpec(taskId: string, capability = 'echo'): TaskSpec {
  return { ...NO_CONSTRAINTS, taskId, capability, payload: '{}', callbackTopic: '', traceId: '' };
}
