import type { SubmitBody, SubmitReply, TaskMessage } from '@agent-reach/protocol';
import { postTask, type RouterTarget } from '../client/router-api.ts';
import type { ChildTaskRequest } from './task.ts';

/** Sends a task to a router; `ReachClient` has this shape too. */
export interface TaskSubmitter {
  submit(body: SubmitBody, signal?: AbortSignal): Promise<SubmitReply>;
}

/** The agent's own submitter: posts the body as is (no callback topic of its own). */
export class RouterSubmitter implements TaskSubmitter {
  constructor(private readonly target: RouterTarget) {}

  /** `POST /v1/tasks`. */
  submit(body: SubmitBody, signal?: AbortSignal): Promise<SubmitReply> {
    return postTask(this.target, body, signal);
  }
}

/**
 * The body of a task submitted while handling `parent`: the parent's id and trace are set last,
 * so a request cannot drop them (they are how the router's loop guard follows the chain).
 */
export function childTaskBody(
  req: ChildTaskRequest,
  parent: Pick<TaskMessage, 'task_id' | 'trace_id'>,
): SubmitBody {
  const body: SubmitBody = { ...req, parent_task_id: parent.task_id };
  // An entry without a trace (a hand-written router, say) lets the router make one.
  if (parent.trace_id !== '') body.trace_id = parent.trace_id;
  else delete body.trace_id;
  return body;
}
