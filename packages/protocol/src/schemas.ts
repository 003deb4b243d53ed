import { Type, type Static } from '@sinclair/typebox';
import { ID_PATTERN } from './ids.ts';
import { TENANT_PATTERN } from './tenants.ts';
import { AGENT_STATUSES, TASK_STATUSES } from './states.ts';

const Id = (description: string) => Type.String({ pattern: ID_PATTERN, description });
/**
 * An id as a requester names it: bare (its own tenant's) or `<tenant>/<id>` (another tenant's:
 * operators only, docs/SECURITY.md).
 */
const ScopedIdRef = (description: string) =>
  Type.String({ pattern: '^([a-z0-9][a-z0-9_-]{0,31}/)?[A-Za-z0-9_.:-]{1,128}$', description });

/** Longest hold of a delayed task (`delay_ms`, `run_at`): 30 days. */
export const MAX_DELAY_MS = 30 * 24 * 3600 * 1000;

/** `POST /v1/agents/register` body. */
export const RegisterBody = Type.Object(
  {
    agent_id: Id('Stable name of the agent; letters, digits and _.:- up to 128'),
    instance_id: Type.Optional(
      Id('This process; a new instance_id for a known agent raises its epoch'),
    ),
    capabilities: Type.Array(Id('Capability name'), {
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
    }),
    max_concurrency: Type.Integer({ minimum: 1, maximum: 10000 }),
    region: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
    channel: Type.Optional(Type.Union([Type.Literal('push'), Type.Literal('pull')])),
    meta: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32 }),
    ),
    ready: Type.Optional(
      Type.Boolean({
        description: 'false for a two-phase start: no tasks until a heartbeat reports ready',
        default: true,
      }),
    ),
    tags: Type.Optional(Type.Array(Id('Routing tag'), { maxItems: 64, uniqueItems: true })),
    observe: Type.Optional(
      Type.Boolean({
        description: 'Probes only, no caller traffic, until POST /v1/agents/:id/serve',
      }),
    ),
    priority: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10, description: 'Bias among agents of similar load' }),
    ),
    weight: Type.Optional(
      Type.Number({
        minimum: 0.1,
        maximum: 10,
        description: 'Bias among agents of similar load; 1 is neutral',
      }),
    ),
    shared: Type.Optional(
      Type.Boolean({
        description: 'Serve every tenant, not only the key’s own; operator keys only',
      }),
    ),
    input_schemas: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Capability → JSON Schema of its payload (an object schema, ≤ 16 KiB each): the input schema of its MCP tool (docs/MCP.md)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

/**
 * A Redis ACL user issued to one agent instance (`REACH_AGENT_ACL=on`): it may read only the
 * agent's inbox and pools and append only to its acks stream (docs/SECURITY.md).
 */
export const RedisCredentials = Type.Object({
  username: Type.String(),
  password: Type.String(),
});
export type RedisCredentials = Static<typeof RedisCredentials>;

/** `POST /v1/agents/register` reply. */
export const RegisterReply = Type.Object({
  agent_id: Type.String(),
  instance_id: Type.String(),
  epoch: Type.Integer(),
  token: Type.String(),
  stream: Type.String(),
  group: Type.String(),
  acks_stream: Type.String(),
  heartbeat_interval_ms: Type.Integer(),
  lease_ms: Type.Integer(),
  control_stream: Type.Optional(
    Type.String({
      description:
        'Stream of notices for the agent (cancel a task), read with XREAD on a connection of its own (docs/PROTOCOL.md §4)',
    }),
  ),
  exec_lease_ms: Type.Optional(
    Type.Integer({
      description:
        "The shortest execution lease of the agent's capabilities: renew running tasks every third of it (docs/PROTOCOL.md §4)",
    }),
  ),
  pools: Type.Array(Type.String(), {
    description:
      "Pull agents: the capability pool streams to read with `group`, each capability's priority bands highest first: read them in this order",
  }),
  tenant: Type.Optional(
    Type.String({ description: 'The tenant of the registering key: whose tasks the agent serves' }),
  ),
  shared: Type.Optional(Type.Boolean({ description: 'Serves every tenant' })),
  redis: Type.Optional(RedisCredentials),
  ack_key: Type.Optional(
    Type.String({
      pattern: '^[0-9a-f]{64}$',
      description:
        'Present when acks must be signed: hex key of HMAC-SHA256 over each ack (docs/PROTOCOL.md §4)',
    }),
  ),
});
export type RegisterReply = Static<typeof RegisterReply>;

/** `POST /v1/agents/:agent_id/heartbeat` body. */
/** Runtime figures a heartbeat carries; AgentRuntime (snapshot.ts) is their type. */
export const AgentRuntimeSchema = Type.Object(
  {
    loop_lag_p99_ms: Type.Number({
      minimum: 0,
      maximum: 3_600_000,
      description:
        "p99 of the event loop's wake-up delay since the last heartbeat, ms (Python: the heartbeat thread's)",
    }),
    gc_share: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'Share of the time since the last heartbeat spent in garbage collection',
      }),
    ),
    rss_bytes: Type.Integer({ minimum: 0, maximum: 2 ** 50, description: 'Resident set size' }),
  },
  { additionalProperties: false },
);

export const HeartbeatBody = Type.Object(
  {
    inflight: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    status: Type.Optional(Type.Union([Type.Literal('idle'), Type.Literal('busy')])),
    ready: Type.Optional(
      Type.Boolean({
        description:
          'true: takes tasks (a two-phase start is done); false: no new tasks (running ones go on) until a heartbeat says true',
      }),
    ),
    reachable: Type.Optional(
      Type.Boolean({
        description:
          'false: the agent behind this one (an endpoint a relay calls) does not answer: SUSPECT at once, until a heartbeat says true',
      }),
    ),
    runtime: Type.Optional(AgentRuntimeSchema),
  },
  { additionalProperties: false },
);
export type HeartbeatBody = Static<typeof HeartbeatBody>;

/** Reply to heartbeat and deregister. */
export const AgentAck = Type.Object({
  agent_id: Type.String(),
  epoch: Type.Integer(),
  status: Type.Union(AGENT_STATUSES.map((s) => Type.Literal(s))),
  lease_ms: Type.Integer(),
  /** New Redis credentials, when the agent's ACL user was made again (back from OFFLINE, Redis restarted). */
  redis: Type.Optional(RedisCredentials),
  /** With `redis`: the instance's ack key, for an agent registered before signed acks were required. */
  ack_key: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
});
export type AgentAck = Static<typeof AgentAck>;

/** Path parameters naming an agent. */
export const AgentParams = Type.Object({ agent_id: Id('Agent id') });
export type AgentParams = Static<typeof AgentParams>;

/** One agent as the API shows it. */
export const AgentView = Type.Object({
  agent_id: Type.String(),
  instance_id: Type.Optional(Type.String({ description: 'Shown to operators only' })),
  epoch: Type.Optional(Type.Integer({ description: 'Shown to operators only' })),
  tenant: Type.String(),
  shared: Type.Boolean(),
  status: Type.Union(AGENT_STATUSES.map((s) => Type.Literal(s))),
  capabilities: Type.Array(Type.String()),
  max_concurrency: Type.Integer(),
  inflight: Type.Integer({ description: 'Tasks delivered and not yet finished (live count)' }),
  reported_inflight: Type.Integer({ description: 'Inflight count from the last heartbeat' }),
  region: Type.String(),
  channel: Type.Union([Type.Literal('push'), Type.Literal('pull')]),
  registered_at: Type.Integer(),
  last_heartbeat_at: Type.Integer(),
  lease_age_ms: Type.Integer(),
  ejected_until: Type.Integer({
    description: 'Epoch ms until which a slow outlier gets no tasks; 0 when not ejected',
  }),
  health_score: Type.Integer({
    minimum: 0,
    maximum: 100,
    description:
      "From the agent's recent outcomes: failures, lease lapses, receipt timeouts, failed probes, slow completions (100 = none)",
  }),
  health_samples: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'How many task outcomes (probes aside) the health window holds',
    }),
  ),
  degraded_until: Type.Integer({
    description:
      'DEGRADED: epoch ms of the end of its cooldown (recovery needs probes after it); 0 otherwise',
  }),
  tags: Type.Array(Type.String()),
  observe: Type.Boolean(),
  unreachable: Type.Optional(
    Type.Boolean({
      description:
        'An endpoint agent whose relay reports its endpoint not answering (SUSPECT, and routed nothing until it answers)',
    }),
  ),
  priority: Type.Integer(),
  weight: Type.Number(),
  ewma_ms: Type.Record(Type.String(), Type.Number(), {
    description: 'Execution-time EWMA per capability',
  }),
  runtime: Type.Optional(AgentRuntimeSchema),
  health_check: Type.Optional(
    Type.Object(
      {
        ok: Type.Boolean(),
        at: Type.Integer({ description: 'When the probe answer was applied, epoch ms' }),
        dependencies: Type.Record(
          Type.String(),
          Type.Object({
            ok: Type.Boolean(),
            latency_ms: Type.Optional(Type.Integer({ minimum: 0 })),
            detail: Type.Optional(Type.String()),
          }),
        ),
      },
      {
        description:
          "The latest probe's health check answer, with the dependencies the agent reported",
      },
    ),
  ),
  dependency_down: Type.Optional(
    Type.String({
      description:
        'A dependency flagged down fleet-wide made the agent SUSPECT; it gets no task until a probe passes without it',
    }),
  ),
  meta: Type.Record(Type.String(), Type.Unknown()),
});
export type AgentView = Static<typeof AgentView>;

/** Lowest and highest task priority (`priority` on submit): 9 is the most urgent, 0 the default. */
export const MIN_TASK_PRIORITY = 0;
export const MAX_TASK_PRIORITY = 9;
/** Most `fallback_capabilities` on one submission. */
export const MAX_FALLBACK_CAPABILITIES = 8;

/** A `fairness_key`: 1–64 letters, digits and `_ . : @ / + = -`. */
export const FAIRNESS_KEY_PATTERN = '^[A-Za-z0-9_.:@/+=-]{1,64}$';

/** `POST /v1/tasks` body. */
export const SubmitBody = Type.Object(
  {
    task_id: Type.Optional(Id('Caller-chosen id; a repeat returns the existing task')),
    capability: Id('Capability that must serve the task'),
    payload: Type.Unknown({
      description: 'Any JSON value, at most the payload limit once serialised',
    }),
    timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 })),
    max_execution_ms: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 7 * 24 * 3600 * 1000,
        description:
          'The longest one attempt may run once received: its execution lease lapses then, renewals or not, and it is retried',
      }),
    ),
    callback_topic: Type.Optional(Id('Topic the final result is published to')),
    callback_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'URL the final result (with stream: true, progress and chunks too) is POSTed to, signed with the tenant’s webhook secret (Standard Webhooks); its host must be allowed (REACH_WEBHOOK_HOSTS). May stand beside callback_topic: both get the result.',
      }),
    ),
    trace_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' })),
    parent_task_id: Type.Optional(
      ScopedIdRef(
        'The task during whose handling this one is submitted (loop guard), as its agent received it',
      ),
    ),
    tags: Type.Optional(
      Type.Array(Id('Tag the agent must have besides the capability'), {
        maxItems: 16,
        uniqueItems: true,
      }),
    ),
    region: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
    region_policy: Type.Optional(
      Type.Union([Type.Literal('strict'), Type.Literal('prefer')], { default: 'prefer' }),
    ),
    session_id: Type.Optional(Id('Tasks of one session stick to the agent that served it')),
    mode: Type.Optional(
      Type.Union([Type.Literal('push'), Type.Literal('batch')], {
        description: 'batch: into the capability pool for pull agents',
      }),
    ),
    on_no_agent: Type.Optional(
      Type.Union([Type.Literal('reject'), Type.Literal('queue')], {
        description:
          'With no live agent (absent): the task waits in the waiting room when it has a deadline (timeout_s, or the default of a capability that has had agents), else 503 NO_AGENT; reject: 503 NO_AGENT at once; queue: into the capability pool (pull agents read it; push agents that appear get it)',
      }),
    ),
    on_at_capacity: Type.Optional(
      Type.Union([Type.Literal('reject'), Type.Literal('queue')], {
        description:
          'With every agent at max_concurrency: queue waits in the waiting room (202, status queued; the default), reject answers 429 AT_CAPACITY after a short wait',
      }),
    ),
    fairness_key: Type.Optional(
      Type.String({
        pattern: FAIRNESS_KEY_PATTERN,
        description:
          'Who the task is for within the tenant (an end user, a customer, a session): the waiting room shares a tenant’s turns fairly between its keys. At most 64 characters',
      }),
    ),
    fairness_weight: Type.Optional(
      Type.Number({
        minimum: 0.01,
        maximum: 1000,
        description:
          'The fairness key’s weight within its tenant (default 1), capped by the tenant’s max_fairness_weight',
      }),
    ),
    delay_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DELAY_MS,
        description: 'Hold the task this long before sending it (202, status delayed); 0 = now',
      }),
    ),
    run_at: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Epoch ms to send the task at (at most 30 days ahead); not with delay_ms',
      }),
    ),
    priority: Type.Optional(
      Type.Integer({
        minimum: MIN_TASK_PRIORITY,
        maximum: MAX_TASK_PRIORITY,
        default: 0,
        description:
          'Task priority, 9 most urgent: held and pooled tasks are taken highest first, FIFO within a priority (not the agent-side registration priority)',
      }),
    ),
    stream: Type.Optional(
      Type.Boolean({
        description:
          "The callback topic also gets the task's progress values and output chunks as they come (items with status progress, chunk or truncated), before its final item",
      }),
    ),
    fallback_capabilities: Type.Optional(
      Type.Array(Id('Capability tried, in order, only when no agent of `capability` is live'), {
        maxItems: MAX_FALLBACK_CAPABILITIES,
        uniqueItems: true,
      }),
    ),
  },
  { additionalProperties: false },
);
export type SubmitBody = Static<typeof SubmitBody>;

/** Largest wait of a `POST /v1/tasks?wait_ms=` submission. */
export const MAX_SUBMIT_WAIT_MS = 60_000;

/** `POST /v1/tasks` query. */
export const SubmitQuery = Type.Object(
  {
    wait_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SUBMIT_WAIT_MS,
        description:
          'Hold the reply until the task is final (or this long): the reply carries the result. Excludes callback_topic.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SubmitQuery = Static<typeof SubmitQuery>;

/** `POST /v1/tasks` reply. */
export const SubmitReply = Type.Object({
  task_id: Type.String(),
  status: Type.Union(TASK_STATUSES.map((s) => Type.Literal(s))),
  agent_id: Type.String(),
  stream: Type.String(),
  message_id: Type.String(),
  result: Type.Optional(
    Type.Unknown({ description: 'The result of a completed task (submissions with wait_ms)' }),
  ),
  error: Type.Optional(
    Type.String({ description: 'Why a task failed or died (submissions with wait_ms)' }),
  ),
});
export type SubmitReply = Static<typeof SubmitReply>;

/** Most tasks in one `POST /v1/tasks/batch`. */
export const MAX_BATCH_TASKS = 1000;

/** `POST /v1/tasks/batch` body: many submissions in one request. */
export const SubmitBatchBody = Type.Object(
  { tasks: Type.Array(SubmitBody, { minItems: 1, maxItems: MAX_BATCH_TASKS }) },
  { additionalProperties: false },
);
export type SubmitBatchBody = Static<typeof SubmitBatchBody>;

/** One submission's outcome in a batch: what `POST /v1/tasks` would have answered, with its status code. */
export const SubmitBatchItem = Type.Object({
  http_status: Type.Integer({
    description: 'The status POST /v1/tasks would have answered: 202, 200, 4xx or 503',
  }),
  task_id: Type.Optional(
    Type.String({
      description: 'Present on every item; on a 429 or 503 item, retry with it (idempotent)',
    }),
  ),
  status: Type.Optional(Type.Union(TASK_STATUSES.map((s) => Type.Literal(s)))),
  agent_id: Type.Optional(Type.String()),
  stream: Type.Optional(Type.String()),
  message_id: Type.Optional(Type.String()),
  error: Type.Optional(Type.String({ description: 'Stable error code, as in an error reply' })),
  message: Type.Optional(Type.String()),
});
export type SubmitBatchItem = Static<typeof SubmitBatchItem>;

/** `POST /v1/tasks/batch` reply: one item per submitted task, in order. */
export const SubmitBatchReply = Type.Object({ results: Type.Array(SubmitBatchItem) });
export type SubmitBatchReply = Static<typeof SubmitBatchReply>;

/** Path parameters naming a task. */
export const TaskParams = Type.Object({
  task_id: ScopedIdRef('Task id; `<tenant>/<task_id>` names another tenant’s (operators)'),
});
export type TaskParams = Static<typeof TaskParams>;

/** `GET /v1/tasks/:task_id` query. */
export const TaskViewQuery = Type.Object(
  {
    include: Type.Optional(
      Type.Literal('payload', {
        description: 'payload: the live view carries the caller’s payload too',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TaskViewQuery = Static<typeof TaskViewQuery>;

const TimelineEntrySchema = Type.Object(
  {
    stage: Type.String(),
    at: Type.Integer({ description: 'Epoch milliseconds, Redis server time' }),
    agent_id: Type.Optional(Type.String()),
    attempt: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);

/** Most children a task's view lists (`TaskView.children`). */
export const MAX_LISTED_CHILDREN = 100;

/** `GET /v1/tasks/:task_id` reply. */
export const TaskView = Type.Object({
  task_id: Type.String(),
  status: Type.Union(TASK_STATUSES.map((s) => Type.Literal(s))),
  capability: Type.String(),
  agent_id: Type.String(),
  attempts: Type.Integer(),
  callback_topic: Type.Optional(Type.String()),
  trace_id: Type.Optional(Type.String()),
  created_at: Type.Integer(),
  deadline_ms: Type.Integer(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String()),
  dead_reason: Type.Optional(Type.String()),
  parent_task_id: Type.Optional(Type.String()),
  hops: Type.Optional(Type.Integer()),
  children: Type.Optional(
    Type.Array(Type.String(), {
      description: `Tasks submitted with this one as parent_task_id that are kept, by task_id (at most ${MAX_LISTED_CHILDREN})`,
    }),
  ),
  priority: Type.Optional(Type.Integer({ description: 'The task priority, when above 0' })),
  fallback_capabilities: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "The task's fallbacks; a send to one says so in its `sent` stage's routing (`capability`, `fallback: true`)",
    }),
  ),
  timeline: Type.Array(TimelineEntrySchema),
  archived: Type.Optional(
    Type.Boolean({
      description:
        'true: read from the archive in InfluxDB after the task’s Redis state expired (docs/OBSERVABILITY.md, History)',
    }),
  ),
  payload: Type.Optional(
    Type.Unknown({
      description:
        'The caller’s payload: on a live view with `?include=payload` while the task runs or is dead-lettered (a completed or cancelled task keeps none in Redis); on an archived view when the capability archives payloads (a string of its first bytes when cut)',
    }),
  ),
  payload_cut: Type.Optional(
    Type.Boolean({ description: 'Archived views: the payload was longer than the archive keeps' }),
  ),
  result_cut: Type.Optional(
    Type.Boolean({ description: 'Archived views: the result was longer than the archive keeps' }),
  ),
});
export type TaskView = Static<typeof TaskView>;

/** `POST /v1/tasks/:task_id/cancel` reply: the task is final for the caller at once. */
export const CancelReply = Type.Object({
  task_id: Type.String(),
  status: Type.Literal('cancelled'),
});
export type CancelReply = Static<typeof CancelReply>;

/** `GET /v1/callbacks/:topic` path parameters. */
export const CallbackParams = Type.Object({
  topic: ScopedIdRef('Callback topic; `<tenant>/<topic>` names another tenant’s (operators)'),
});
export type CallbackParams = Static<typeof CallbackParams>;

/** `GET /v1/callbacks/:topic` query. */
export const CallbackQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        pattern: '^(0|[0-9]{1,20}-[0-9]{1,20})$',
        description: 'Cursor from the previous reply; 0 for the start',
      }),
    ),
    wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 30000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);
export type CallbackQuery = Static<typeof CallbackQuery>;

/** One final result on a callback topic. */
export const CallbackItem = Type.Object({
  id: Type.String({ description: 'Entry id on the topic' }),
  task_id: Type.String(),
  status: Type.Union([
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('dead'),
    Type.Literal('cancelled'),
    // Non-final items of a task submitted with `stream: true`.
    Type.Literal('progress'),
    Type.Literal('chunk'),
    Type.Literal('truncated'),
  ]),
  capability: Type.String(),
  agent_id: Type.String(),
  attempt: Type.Integer(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String()),
  duration_ms: Type.Optional(Type.Integer()),
  completed_at: Type.Integer({
    description: 'When the task ended; for a progress, chunk or truncated item, its time',
  }),
  progress: Type.Optional(Type.Unknown({ description: 'status progress: the value' })),
  chunk: Type.Optional(Type.String({ description: 'status chunk: the text' })),
});
export type CallbackItem = Static<typeof CallbackItem>;

/** `GET /v1/callbacks/:topic` reply. */
export const CallbacksReply = Type.Object({
  items: Type.Array(CallbackItem),
  cursor: Type.String({ description: 'Pass as `after` to read on' }),
});
export type CallbacksReply = Static<typeof CallbacksReply>;

/** Every error reply. */
export const ErrorReply = Type.Object({
  error: Type.String({ description: 'Stable code, listed in docs/errors.md' }),
  message: Type.String(),
  task_id: Type.Optional(
    Type.String({
      description:
        "On a submission's error: its task_id (the caller's, or the one the router made). A 429 or 5xx submission may have been accepted: retry with this task_id, which never runs it twice",
    }),
  ),
});
export type ErrorReply = Static<typeof ErrorReply>;

/** `GET /v1/dlq` query. */
export const DlqQuery = Type.Object(
  {
    capability: Type.Optional(Id('Only dead letters of this capability')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);
export type DlqQuery = Static<typeof DlqQuery>;

/** One dead letter. */
export const DlqItem = Type.Object({
  task_id: Type.String(),
  capability: Type.String(),
  reason: Type.String({ description: 'max_attempts, deadline, loop, not_retryable or no_agent' }),
  dead_at: Type.Integer(),
  attempts: Type.Integer(),
  error: Type.Optional(Type.String()),
});
export type DlqItem = Static<typeof DlqItem>;

/** `GET /v1/dlq` reply, newest first. */
export const DlqReply = Type.Object({ items: Type.Array(DlqItem) });
export type DlqReply = Static<typeof DlqReply>;

/** `POST /v1/dlq/:task_id/replay` reply. */
export const ReplayReply = Type.Object({
  task_id: Type.String(),
  status: Type.Literal('retry_wait'),
  attempt: Type.Integer(),
});
export type ReplayReply = Static<typeof ReplayReply>;

/** `GET /v1/route` query: the decision for a task, without delivering it. */
export const RouteQuery = Type.Object(
  {
    capability: Id('Capability'),
    task_id: Type.Optional(Id('Task id the tie-break hashes; default a fixed one')),
    tags: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9_.:,-]{0,1100}$', description: 'Comma-separated tags' }),
    ),
    region: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
    region_policy: Type.Optional(Type.Union([Type.Literal('strict'), Type.Literal('prefer')])),
    session_id: Type.Optional(Id('Session')),
    fallback: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:,-]{0,1100}$',
        description: 'Comma-separated fallback capabilities, as fallback_capabilities on submit',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RouteQuery = Static<typeof RouteQuery>;

/** One agent in a routing decision. */
export const RouteCandidate = Type.Object({
  agent_id: Type.String(),
  score: Type.Number({
    description:
      'Lower is better: load, plus the slow-node penalty, minus the priority and weight bias',
  }),
  load: Type.Number({ description: 'inflight / max_concurrency' }),
  excluded: Type.Optional(Type.String({ description: 'Why the agent was not a candidate' })),
});
export type RouteCandidate = Static<typeof RouteCandidate>;

/** `GET /v1/route` reply. */
export const RouteReply = Type.Object({
  agent_id: Type.String({ description: 'The chosen agent; empty when none (see candidates)' }),
  channel: Type.Union([Type.Literal('push'), Type.Literal('pull'), Type.Literal('none')]),
  score: Type.Number(),
  snapshot_age_ms: Type.Integer(),
  capability: Type.Optional(
    Type.String({ description: 'The capability routed to: the one asked for, or a fallback' }),
  ),
  fallback: Type.Optional(
    Type.Boolean({
      description: 'The capability asked for had no live agent: a fallback was used',
    }),
  ),
  candidates: Type.Array(RouteCandidate),
});
export type RouteReply = Static<typeof RouteReply>;

const KeyRole = Type.Union(
  [Type.Literal('caller'), Type.Literal('operator'), Type.Literal('agent'), Type.Literal('relay')],
  {
    description:
      'caller: submits and reads its tenant’s tasks; operator: everything, every tenant; agent: registers agents (and submits child tasks); relay: registers the declared endpoint agents it serves, nothing else',
  },
);
const KeyCapabilities = Type.Array(
  Type.String({ pattern: `(${ID_PATTERN})|^\\*$`, description: 'Capability name, or * for any' }),
  { minItems: 1, maxItems: 256, uniqueItems: true },
);

/** `POST /v1/keys` body. */
export const CreateKeyBody = Type.Object(
  {
    tenant: Type.String({ pattern: TENANT_PATTERN, description: 'Tenant the key acts for' }),
    role: KeyRole,
    capabilities: Type.Optional(KeyCapabilities),
    label: Type.Optional(
      Type.String({ maxLength: 200, description: 'Free text: whose key it is' }),
    ),
    expires_at: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Epoch ms after which the key is refused' }),
    ),
    rate_per_s: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000,
        description:
          'Requests per second across every router; 0 = unlimited; absent: REACH_KEY_RATE_PER_S',
      }),
    ),
    max_inflight: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000_000,
        description: 'Tasks in flight; 0 = unlimited; absent: REACH_KEY_MAX_INFLIGHT',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

const KeyQuota = (description: string) =>
  Type.Union([Type.Integer(), Type.Null()], { description });

/** An API key as listed: never its secret. */
export const KeyView = Type.Object({
  key_id: Type.String({ description: 'Public id of the key (the part after rk_)' }),
  tenant: Type.String(),
  role: KeyRole,
  capabilities: Type.Array(Type.String()),
  label: Type.String(),
  created_at: Type.Integer({ description: 'Epoch ms' }),
  expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Epoch ms, or null' }),
  rate_per_s: KeyQuota('Requests per second; null: the router default'),
  max_inflight: KeyQuota('Tasks in flight; null: the router default'),
});
export type KeyView = Static<typeof KeyView>;

/** `POST /v1/keys` reply: the key itself, shown this once. */
export const CreateKeyReply = Type.Object({
  key_id: Type.String(),
  key: Type.String({ description: 'Send as Authorization: Bearer <key>; shown only once' }),
  tenant: Type.String(),
  role: KeyRole,
  capabilities: Type.Array(Type.String()),
  label: Type.String(),
  expires_at: Type.Union([Type.Integer(), Type.Null()]),
  rate_per_s: KeyQuota('Requests per second; null: the router default'),
  max_inflight: KeyQuota('Tasks in flight; null: the router default'),
});
export type CreateKeyReply = Static<typeof CreateKeyReply>;

/** `GET /v1/keys` reply. */
export const KeysReply = Type.Object({ items: Type.Array(KeyView) });
export type KeysReply = Static<typeof KeysReply>;

/** `DELETE /v1/keys/:key_id` params. */
export const KeyParams = Type.Object({
  key_id: Type.String({ pattern: '^[0-9a-f]{16}$', description: 'Key id (16 hex digits)' }),
});
export type KeyParams = Static<typeof KeyParams>;

/** `POST /v1/console/login` body. */
export const ConsoleLoginBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 512, description: 'An API key' }) },
  { additionalProperties: false },
);
export type ConsoleLoginBody = Static<typeof ConsoleLoginBody>;

/** `POST /v1/console/login` reply: who the console acts as. */
export const ConsoleLoginReply = Type.Object({
  key_id: Type.String(),
  tenant: Type.String(),
  role: KeyRole,
});
export type ConsoleLoginReply = Static<typeof ConsoleLoginReply>;
