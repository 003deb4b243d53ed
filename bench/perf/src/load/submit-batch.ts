import type { Pool } from 'undici';
import { ROUTES } from '@agent-reach/protocol';
import { autoBatch } from './auto-batch.ts';
import { RetryLater, type Target } from './loops.ts';

/** One item of a `POST /v1/tasks/batch` reply, as far as a caller reads it. */
interface BatchItem {
  http_status: number;
  error?: string;
  message?: string;
}

/**
 * A bench task's submission, one item of a batch: what the reach callers and the router floor's
 * caller send alike, so the two servers parse the same bodies.
 */
export function benchTask(
  key: string,
  capability: string,
  callbackTopic: string,
): { task_id: string; capability: string; payload: { n: number }; callback_topic: string } {
  return { task_id: key, capability, payload: { n: 1 }, callback_topic: callbackTopic };
}

/** How a caller sends `POST /v1/tasks/batch`. */
export interface SubmitBatchOptions {
  pool: Pool;
  /** Most tasks in one request (the router takes up to 1,000). */
  maxBatch: number;
  /** Headers of every request (content type, a bearer key). */
  headers: Record<string, string>;
  /** The submission of one task: its item in the body's `tasks`. */
  taskBody: (key: string) => object;
}

/**
 * The submissions of one tick in one `POST /v1/tasks/batch` (what ReachClient.submitBatch()
 * does): resolves once the task is accepted (202, or 200 for one already there); a 429 or 503 item
 * is "retry shortly", which the SDK's run() does too. `requestsSent` counts the requests;
 * `limitBatch` lowers the most tasks in one (`undefined`: back to `maxBatch`).
 */
export function submitBatchTarget({
  pool,
  maxBatch,
  headers,
  taskBody,
}: SubmitBatchOptions): Target & {
  readonly requestsSent: () => number;
  readonly limitBatch: (max: number | undefined) => void;
} {
  let requests = 0;
  let limit = maxBatch;
  const submit = autoBatch(
    async (keys) => {
      requests++;
      const res = await pool.request({
        method: 'POST',
        path: ROUTES.submitBatch,
        headers,
        body: JSON.stringify({ tasks: keys.map(taskBody) }),
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        if (res.statusCode === 503) throw new RetryLater(text);
        throw new Error(`router answered ${res.statusCode}: ${text.slice(0, 200)}`);
      }
      const { results } = (await res.body.json()) as { results: BatchItem[] };
      return results.map((item) => {
        if (item.http_status === 202 || item.http_status === 200) return undefined;
        const text = `${item.http_status} ${item.error ?? ''}: ${item.message ?? ''}`;
        // 429 AT_CAPACITY (every agent at max_concurrency), 503 NO_AGENT or STORE_UNAVAILABLE.
        return item.http_status === 429 || item.http_status === 503
          ? new RetryLater(text)
          : new Error(`router answered ${text}`);
      });
    },
    () => limit,
  );
  return {
    submit,
    requestsSent: () => requests,
    limitBatch: (max) => {
      limit = Math.min(max ?? maxBatch, maxBatch);
    },
  };
}
