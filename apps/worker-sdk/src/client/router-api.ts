import {
  ROUTES,
  SubmitBatchReply,
  SubmitReply,
  type SubmitBatchItem,
  type SubmitBody,
} from '@agent-reach/protocol';
import { checkReply } from '../util/check.ts';
import { joinUrl, requestOk } from '../util/http.ts';

/** Where and how to reach a router. */
export interface RouterTarget {
  /** Base URL of the router (or the load balancer in front of several). */
  routerUrl: string;
  /** Timeout of the request. */
  timeoutMs: number;
  /** API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string | undefined;
}

/**
 * `POST /v1/tasks`, the body sent as given. Shared by `ReachClient.submit()` and an agent's
 * `TaskContext.submit()`. Resolves with the router's reply (202 new, 200 when the task_id
 * existed); rejects with a `ReachHttpError` on any other status, a `ReachConnectionError` when
 * no answer came, or the signal's reason when it aborts.
 */
export async function postTask(
  target: RouterTarget,
  body: SubmitBody,
  signal?: AbortSignal,
  traceparent?: string,
): Promise<SubmitReply> {
  const url = joinUrl(target.routerUrl, ROUTES.submit);
  const reply = await requestOk({
    method: 'POST',
    url,
    body,
    token: target.apiKey,
    timeoutMs: target.timeoutMs,
    signal,
    traceparent,
  });
  return checkReply(SubmitReply, `POST ${url}`, reply);
}

/** `POST /v1/tasks/batch`: one outcome per body, in order (see `ReachClient.submitBatch()`). */
export async function postTaskBatch(
  target: RouterTarget,
  bodies: SubmitBody[],
  signal?: AbortSignal,
): Promise<SubmitBatchItem[]> {
  const url = joinUrl(target.routerUrl, ROUTES.submitBatch);
  const reply = await requestOk({
    method: 'POST',
    url,
    body: { tasks: bodies },
    token: target.apiKey,
    timeoutMs: target.timeoutMs,
    signal,
  });
  return checkReply(SubmitBatchReply, `POST ${url}`, reply).results;
}
