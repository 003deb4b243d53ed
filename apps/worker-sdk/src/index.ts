/**
 * `@agent-reach/worker-sdk`: run an agent that serves capabilities ({@link ReachAgent}) and
 * submit tasks to a fleet and await their results ({@link ReachClient}).
 * @packageDocumentation
 */
export { ReachAgent, type AgentState, type ReachAgentEvents } from './agent/agent.ts';
export {
  compileAgentOptions,
  type ReachAgentOptions,
  type CompiledAgentOptions,
} from './agent/options.ts';
export type { TaskContext, TaskHandler } from './agent/task.ts';
export type { ChildResultOptions, ChildTask, ChildTaskRequest } from './agent/child-task.ts';
export type { HealthAnswer, HealthCheck } from './agent/probe.ts';
export { redisConnectionFromEnv } from './agent/redis-util.ts';
export { clientSettingFromEnv, RENAMED_SETTING_WARNING } from './util/client-env.ts';
export type { RedisConnectionExtras } from '@agent-reach/service-kit/redis';
export {
  ReachClient,
  type SubmitRequest,
  type ResultOptions,
  type RunOptions,
} from './client/client.ts';
export type { TaskEventMessage, TaskEventsOptions } from './client/task-events.ts';
export {
  ReachHttpClient,
  type HttpRequestOptions,
  type ReachHttpClientOptions,
} from './client/http-client.ts';
export {
  compileClientOptions,
  type ReachClientOptions,
  type CompiledClientOptions,
} from './client/options.ts';
export { installSignalHandlers, type Closable, type SignalHandlerOptions } from './signals.ts';
export type { BackoffOptions } from './util/backoff.ts';
export * from './errors.ts';
export {
  verifyWebhook,
  isWebhookVerificationError,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookVerificationProblem,
} from './client/webhooks.ts';
export type { WebhookBody } from '@agent-reach/protocol';
export type {
  CallbackItem,
  DeadReason,
  RegisterReply,
  SubmitBody,
  SubmitReply,
  TaskView,
} from '@agent-reach/protocol';
