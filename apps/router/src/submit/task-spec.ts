import { DEFAULT_TENANT, type SubmitBody } from '@agent-reach/protocol';
import type { Lineage, TaskSpec } from '@agent-reach/dispatch';

/**
 * The task a submission asks for, with the constraints every send of it will read: what the
 * caller gave, the trace it inherits from its parent (`lineage`, read once per submission) and
 * the submitting key's tenant. `body`'s ids (task_id, callback_topic, parent_task_id) are the
 * scoped ones already (`<tenant>/<id>`).
 */
export function specFromSubmit(
  taskId: string,
  body: SubmitBody,
  payload: string,
  lineage: Lineage | undefined,
  tenant: string = DEFAULT_TENANT,
): TaskSpec {
  return {
    taskId,
    capability: body.capability,
    payload,
    callbackTopic: body.callback_topic ?? '',
    traceId: body.trace_id ?? '',
    // Sorted: the same set of tags is stored the same way whatever order the caller gave.
    tags: body.tags ? [...body.tags].sort() : [],
    region: body.region ?? '',
    regionPolicy: body.region_policy ?? 'prefer',
    sessionId: body.session_id ?? '',
    parentTaskId: body.parent_task_id ?? '',
    hops: lineage?.hops ?? 0,
    traceAgents: lineage?.agents ?? [],
    // '' for the default tenant: nothing more to store than before tenants (constraintArgs).
    tenant: tenant === DEFAULT_TENANT ? '' : tenant,
    priority: body.priority ?? 0,
    fallbackCapabilities: body.fallback_capabilities ?? [],
    ...(body.max_execution_ms ? { maxExecutionMs: body.max_execution_ms } : {}),
    ...(body.stream ? { stream: true } : {}),
    ...(body.mode === 'batch' ? { poolOnly: true } : {}),
  };
}
