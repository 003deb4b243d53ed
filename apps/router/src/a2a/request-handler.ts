import { randomUUID } from 'node:crypto';
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import {
  A2AError,
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { FastifyError } from 'fastify';
import {
  TaskRecordField,
  isIdRef,
  isValidId,
  MAX_SUBMIT_WAIT_MS,
  type ReachKeys,
  type SubmitBody,
} from '@agent-reach/protocol';
import {
  describeError,
  httpError,
  isRedisUnavailable,
  mayUseCapability,
  resolveTraceId,
  type Principal,
} from '@agent-reach/service-kit';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { TaskCanceller } from '@agent-reach/dispatch';
import type { ResultWaiter } from '../callbacks/result-waiter.ts';
import type { InflightQuota } from '../quotas/inflight-quota.ts';
import type { Submitter, SubmitOutcome } from '../submit/submitter.ts';
import type { TaskReader } from '../tasks/task-reader.ts';
import { TenantScope } from '../tasks/tenant-scope.ts';
import { followTask, type TaskStreamDeps } from './task-stream.ts';
import { PartsError, payloadOf, taskOf } from './task-mapping.ts';
import { A2A_PUSH_TOPIC, isPushConfigId, type PushConfigStore } from './push-configs.ts';

/** What one JSON-RPC call is made in the name of: set by the route in the call's context state. */
export interface A2ACall {
  principal: Principal;
  /** The capability of the endpoint (`/a2a/<capability>`); undefined at the fleet's `/a2a`. */
  capability: string | undefined;
  /** Aborted when the caller went away (ends a stream). */
  signal: AbortSignal;
  /** The request's W3C `traceparent` header: the task's trace id comes from it. */
  traceparent: string | string[] | undefined;
}

/** The key of the {@link A2ACall} in a `ServerCallContext`'s state. */
export const A2A_CALL = 'agent-reach.call';

/** What the gateway's handler works with: the router's own submit, read and cancel code. */
export interface A2AHandlerOptions {
  redis: RedisClient;
  keys: ReachKeys;
  submitter: Submitter;
  tasks: TaskReader;
  waiter: ResultWaiter;
  canceller: TaskCanceller;
  /** Tasks in flight per key, as for `POST /v1/tasks`; without it, none is counted. */
  quota?: InflightQuota;
  /** The task events feed; without it, streaming methods are unsupported. */
  events?: TaskStreamDeps;
  /** A2A push-notification configs; without them, push notifications are unsupported. */
  push?: PushConfigStore;
  /** The card of a call made without one (never: the route sets it). */
  fallbackCard: () => AgentCard;
}

/**
 * A push config id a call names, checked: undefined when it names none (`""` or absent).
 * @throws RequestMalformedError (-32602) for anything else that is not a config id
 */
function optionalConfigId(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!isPushConfigId(value))
    throw new RequestMalformedError('a push config id is 1 to 1,024 printable characters');
  return value;
}

function callOf(context: ServerCallContext): A2ACall {
  const call = context.state.get(A2A_CALL) as A2ACall | undefined;
  if (!call) throw new A2AError('the call has no Agent-Reach context');
  return call;
}

/**
 * An Agent-Reach error (an `httpError` of the submit, read or cancel code) as an A2A error: a
 * client's mistake (4xx) is `RequestMalformedError`, anything else (no agent, at capacity, Redis
 * down) an internal error; both carry the stable code in their ErrorInfo metadata (`error`).
 */
function toA2AError(err: unknown): unknown {
  if (err instanceof A2AError) return err;
  const described = describeError(err as FastifyError, isRedisUnavailable);
  if (described.code === 'INTERNAL') return err;
  const options = {
    message: `${described.code}: ${described.message}`,
    metadata: { error: described.code, http_status: String(described.status) },
  };
  if (described.code === 'TASK_NOT_FOUND') return new TaskNotFoundError(options);
  if (described.status < 500 && described.status !== 429) return new RequestMalformedError(options);
  return new A2AError(options);
}

/**
 * The A2A gateway's request handler (the SDK's `A2ARequestHandler`, served over JSON-RPC by the
 * SDK's `JsonRpcTransportHandler`): an A2A task is an Agent-Reach task with the same id, so any
 * router answers for any task. Nothing is kept in this process: sending submits through the
 * router's `Submitter` (the one send path), reading reads the task from Redis, cancelling is the
 * router's cancellation, and streams follow the task's events as `GET /v1/tasks/:id/events` does.
 */
export class ReachA2AHandler implements A2ARequestHandler {
  constructor(private readonly o: A2AHandlerOptions) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.o.fallbackCard();
  }

  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    _context: ServerCallContext,
  ): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError('this gateway has no extended agent card');
  }

  async sendMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<Message | Task> {
    const call = callOf(context);
    try {
      const { scope, body, contextId } = this.submission(params, call);
      const pushed = await this.savePushConfig(params, body.task_id as string, context);
      const blocking = params.configuration?.returnImmediately !== true;
      if (!blocking) {
        const outcome = await this.submitWithin(
          call.principal,
          { ...body, callback_topic: A2A_PUSH_TOPIC },
          scope.tenant,
        );
        return await this.current(outcome, scope, contextId);
      }
      // Registered before the submission, so the result cannot arrive unseen (as wait_ms does).
      const expectation = this.o.waiter.expect(body.task_id as string, MAX_SUBMIT_WAIT_MS);
      let outcome: SubmitOutcome;
      try {
        outcome = await this.submitWithin(
          call.principal,
          { ...body, callback_topic: this.o.waiter.topic, stream: false },
          scope.tenant,
        );
      } catch (err: unknown) {
        expectation.cancel();
        throw err;
      }
      if (!outcome.created) expectation.cancel();
      else await expectation.result;
      // Still running when the wait ran out: its end is pushed (the wait topic has no reader now).
      if (pushed) await this.o.push?.retarget(body.task_id as string);
      return await this.current(outcome, scope, contextId);
    } catch (err: unknown) {
      throw toA2AError(err);
    }
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const call = callOf(context);
    const events = this.streams();
    let initial: Task;
    let scope: TenantScope;
    let id: string;
    let contextId: string;
    try {
      const made = this.submission(params, call);
      scope = made.scope;
      contextId = made.contextId;
      id = made.body.task_id as string;
      await this.savePushConfig(params, id, context);
      const outcome = await this.submitWithin(
        call.principal,
        { ...made.body, callback_topic: A2A_PUSH_TOPIC },
        scope.tenant,
      );
      initial = await this.current(outcome, scope, contextId);
    } catch (err: unknown) {
      throw toA2AError(err);
    }
    yield* followTask(
      events,
      {
        id,
        shownId: scope.show(id),
        contextId,
        read: () => this.read(id, scope),
        show: (x) => scope.show(x),
        signal: call.signal,
        fromNow: false,
      },
      initial,
    );
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const scope = TenantScope.of(callOf(context).principal);
    const id = this.resolve(params.id, scope);
    const task = await this.read(id, scope).catch((err: unknown) => {
      throw toA2AError(err);
    });
    if (!task) throw new TaskNotFoundError(`task ${params.id} is unknown or has expired`);
    return task;
  }

  async listTasks(
    _params: ListTasksRequest,
    _context: ServerCallContext,
  ): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError(
      'ListTasks is not offered: read a task with GetTask, or list dead letters with GET /v1/dlq',
    );
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const principal = callOf(context).principal;
    const scope = TenantScope.of(principal);
    const id = this.resolve(params.id, scope);
    try {
      const outcome = await this.o.canceller.cancel(id, principal.keyId);
      if (outcome.kind === 'unknown')
        throw new TaskNotFoundError(`task ${params.id} is unknown or has expired`);
      if (outcome.kind === 'final')
        throw new TaskNotCancelableError(
          `task ${params.id} has already completed or been dead-lettered; there is nothing to cancel`,
        );
      const task = await this.read(id, scope);
      if (!task) throw new TaskNotFoundError(`task ${params.id} is unknown or has expired`);
      return task;
    } catch (err: unknown) {
      throw toA2AError(err);
    }
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const call = callOf(context);
    const events = this.streams();
    const scope = TenantScope.of(call.principal);
    const id = this.resolve(params.id, scope);
    const initial = await this.read(id, scope).catch((err: unknown) => {
      throw toA2AError(err);
    });
    if (!initial) throw new TaskNotFoundError(`task ${params.id} is unknown or has expired`);
    yield* followTask(
      events,
      {
        id,
        shownId: initial.id,
        contextId: initial.contextId,
        read: () => this.read(id, scope),
        show: (x) => scope.show(x),
        signal: call.signal,
        fromNow: true,
      },
      initial,
    );
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const push = this.pushes();
    const { id, scope } = await this.pushTask(params.taskId, context);
    try {
      const saved = await push.save(id, params, context.requestedVersion ?? '1.0');
      return { ...saved, taskId: scope.show(id) };
    } catch (err: unknown) {
      throw toA2AError(err);
    }
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const push = this.pushes();
    const configId = optionalConfigId(params.id);
    const { id, scope } = await this.pushTask(params.taskId, context);
    // A2A 0.3's get may name no config: the task's first one.
    const stored = configId ? await push.get(id, configId) : (await push.list(id))[0];
    if (!stored)
      throw new TaskNotFoundError(
        `task ${params.taskId} has no push notification config ${params.id}`,
      );
    return { ...stored.config, taskId: scope.show(id) };
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const push = this.pushes();
    const { id, scope } = await this.pushTask(params.taskId, context);
    const configs = (await push.list(id)).map((c) => ({ ...c.config, taskId: scope.show(id) }));
    return { configs, nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    const push = this.pushes();
    const configId = optionalConfigId(params.id);
    if (configId === undefined) throw new RequestMalformedError('name the push config to delete');
    const { id } = await this.pushTask(params.taskId, context);
    await push.delete(id, configId);
  }

  private pushes(): PushConfigStore {
    if (!this.o.push)
      throw new PushNotificationNotSupportedError(
        'push notifications are not served by this router: follow the task with SubscribeToTask',
      );
    return this.o.push;
  }

  /** The task a push-config call names, as GetTask finds it (another tenant's is not found). */
  private async pushTask(
    name: string,
    context: ServerCallContext,
  ): Promise<{ id: string; scope: TenantScope }> {
    const scope = TenantScope.of(callOf(context).principal);
    const id = this.resolve(name, scope);
    const taskKey = this.o.keys.task(id);
    const exists = await this.o.redis.exists(taskKey).catch((err: unknown) => {
      throw toA2AError(err);
    });
    if (exists === 0) throw new TaskNotFoundError(`task ${name} is unknown or has expired`);
    return { id, scope };
  }

  /**
   * Saves a send's `configuration.taskPushNotificationConfig` for task `id` before the task is
   * submitted (so its end cannot come first); false when the send has none.
   */
  private async savePushConfig(
    params: SendMessageRequest,
    id: string,
    context: ServerCallContext,
  ): Promise<boolean> {
    const config = params.configuration?.taskPushNotificationConfig;
    if (!config?.url) return false;
    // save() checks the config (checkPushConfig) before it writes anything.
    await this.pushes().save(id, config, context.requestedVersion ?? '1.0');
    return true;
  }

  private streams(): TaskStreamDeps {
    if (!this.o.events)
      throw new UnsupportedOperationError('streaming is not served by this router');
    return this.o.events;
  }

  /**
   * The id inside Redis of a task the caller names; another tenant's names nothing. A name that is
   * not an id (`""`, `a{b}`, 200 characters, a number) is the caller's mistake: invalid params
   * (-32602), refused before any key is built from it.
   */
  private resolve(name: unknown, scope: TenantScope): string {
    if (!isIdRef(name))
      throw new RequestMalformedError(
        `${JSON.stringify(name)?.slice(0, 140) ?? String(name)} is not a task id: ` +
          'up to 128 of A-Z a-z 0-9 _ . : -, optionally after <tenant>/',
      );
    const id = scope.resolve(name);
    if (id === undefined) throw new TaskNotFoundError(`task ${name} is unknown or has expired`);
    return id;
  }

  /**
   * The submit body a message makes: its parts as the payload (task-mapping.ts `payloadOf`), on
   * the endpoint's capability (at the fleet's `/a2a`, the one named by `metadata.capability`),
   * its task_id the message's id when that is a valid id (a message sent again names the same
   * task, which is then not run twice), else a new one; a `contextId` becomes the session_id (a
   * context's tasks go to the agent that served it) and names the task's context.
   */
  private submission(
    params: SendMessageRequest,
    call: A2ACall,
  ): { scope: TenantScope; body: SubmitBody; contextId: string } {
    const message = params.message;
    if (!message) throw new RequestMalformedError('params.message is missing');
    if (message.taskId)
      throw new UnsupportedOperationError(
        'a task takes one message: send a new message without taskId (a context groups tasks)',
      );
    const named: unknown = message.metadata?.capability ?? params.metadata?.capability;
    const capability = call.capability ?? (typeof named === 'string' ? named : undefined);
    if (capability === undefined || !isValidId(capability))
      throw new RequestMalformedError(
        'name the capability: POST /a2a/<capability>, or metadata.capability at /a2a',
      );
    if (!mayUseCapability(call.principal, capability))
      throw httpError('FORBIDDEN', `this key may not submit to capability ${capability}`);
    let payload: unknown;
    try {
      payload = payloadOf(message.parts);
    } catch (err: unknown) {
      if (err instanceof PartsError) throw new RequestMalformedError(err.message);
      throw err;
    }
    const scope = TenantScope.of(call.principal);
    const taskId = isValidId(message.messageId) ? message.messageId : randomUUID();
    const session =
      message.contextId && isValidId(message.contextId) ? message.contextId : undefined;
    const body: SubmitBody = {
      task_id: scope.own(taskId),
      capability,
      payload,
      trace_id: resolveTraceId(undefined, call.traceparent),
      ...(session ? { session_id: session } : {}),
    };
    return { scope, body, contextId: session ?? taskId };
  }

  /** Submits within the key's in-flight quota, as `POST /v1/tasks` does. */
  private async submitWithin(
    principal: Principal,
    body: SubmitBody,
    tenant: string,
  ): Promise<SubmitOutcome> {
    const quota = this.o.quota;
    const slot =
      quota && !principal.open ? await quota.take(principal, body.task_id ?? '') : undefined;
    let outcome: SubmitOutcome;
    try {
      outcome = await this.o.submitter.submit(body, tenant);
    } catch (err: unknown) {
      await slot?.release();
      throw err;
    }
    if (!outcome.created || outcome.reply.status === 'dead') await slot?.release();
    return outcome;
  }

  /** The task a submission made (or found), as it is now. */
  private async current(
    outcome: SubmitOutcome,
    scope: TenantScope,
    contextId: string,
  ): Promise<Task> {
    const task = await this.read(outcome.reply.task_id, scope, contextId);
    if (!task) throw new TaskNotFoundError(`task ${scope.show(outcome.reply.task_id)} has expired`);
    return task;
  }

  /** A task as A2A shows it; its contextId is its session_id, else its own id. */
  private async read(
    id: string,
    scope: TenantScope,
    contextId?: string,
  ): Promise<Task | undefined> {
    // Every key is built before any promise starts: a key builder that throws must not leave a
    // started read to reject with no one waiting for it (eslint: reach/promise-args).
    const taskKey = this.o.keys.task(id);
    const [view, session] = await Promise.all([
      this.o.tasks.view(id, scope),
      contextId === undefined ? this.o.redis.hget(taskKey, TaskRecordField.sessionId) : contextId,
    ]);
    if (!view) return undefined;
    return taskOf(view, session || view.task_id);
  }
}
