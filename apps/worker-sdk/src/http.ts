/**
 * `@agent-reach/worker-sdk/http`: the SDK's HTTP client and its errors alone, without the agent
 * runtime (no Redis, no logger) — what the `reach` CLI uses.
 * @packageDocumentation
 */
export {
  ReachHttpClient,
  type HttpRequestOptions,
  type ReachHttpClientOptions,
} from './client/http-client.ts';
export type { TaskEventMessage, TaskEventsOptions } from './client/task-events.ts';
export {
  ReachError,
  isReachError,
  ReachHttpError,
  isReachHttpError,
  ReachConnectionError,
  isReachConnectionError,
} from './errors.ts';
