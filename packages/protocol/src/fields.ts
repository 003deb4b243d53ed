/**
 * Field names of stream entries. These strings cross process and language boundaries: every
 * component and docs/PROTOCOL.md use exactly these.
 */
export const TaskField = {
  taskId: 'task_id',
  capability: 'capability',
  payload: 'payload',
  attempt: 'attempt',
  traceId: 'trace_id',
  callbackTopic: 'callback_topic',
  deadlineMs: 'deadline_ms',
  parentTaskId: 'parent_task_id',
  hops: 'hops',
  /**
   * Routing tags the agent must have (each among its tags or capabilities): JSON array text,
   * omitted when none.
   */
  tags: 'tags',
  /** The region the task asks for; omitted when none. */
  region: 'region',
  /**
   * `strict` (only an agent of `region` may take it) or `prefer` (one of `region` when any can);
   * omitted when the task names no region, and `prefer` when missing.
   */
  regionPolicy: 'region_policy',
  /**
   * The W3C `traceparent` of the span that sent this attempt (only while the sender exports
   * spans): the worker's spans are its children. Optional; an invalid one is ignored.
   */
  traceparent: 'traceparent',
  /**
   * `1` on a shadow copy: a real task mirrored to an agent in observation mode, whose result is
   * compared with the serving agent's and never reaches a caller (docs/PROTOCOL.md §7). A handler
   * skips its side effects on one. Omitted on every other entry.
   */
  shadow: 'shadow',
} as const;

/** Capability of the liveness probes registry-sync sends through agents' inboxes. */
export const PROBE_CAPABILITY = '_probe';

/** Fields of an entry on the acks stream. */
export const AckField = {
  taskId: 'task_id',
  stage: 'stage',
  agentId: 'agent_id',
  instanceId: 'instance_id',
  epoch: 'epoch',
  attempt: 'attempt',
  result: 'result',
  durationMs: 'duration_ms',
  error: 'error',
  /** A failure's code (`FailureCode`, or the worker's own: ^[A-Z][A-Z0-9_]{0,63}$). */
  errorCode: 'error_code',
  retryable: 'retryable',
  /** Set by a pull agent: the capability whose pool the task was read from. */
  pool: 'pool',
  /** Set by a pull agent with `pool`: the pool entry's id. */
  messageId: 'message_id',
  /** Optional on a completion: the task's capability, so the execution-time EWMA is updated with the slot release. */
  capability: 'capability',
  /**
   * Optional on a completion or failure sent instead of a separate receipt (the task ended before
   * the receipt went out): milliseconds since the entry was read. The server records `received`
   * at the ack's time minus this.
   */
  receivedAgoMs: 'received_ago_ms',
  /**
   * A `renew` ack: the space-separated ids of every task whose execution lease it renews (the
   * agent's running tasks, one entry for all of them); `task_id` is the first of them.
   */
  taskIds: 'task_ids',
  /** A `progress` ack: the progress value as JSON text (a number, or any JSON value). */
  progress: 'progress',
  /** A `chunk` ack: a JSON array of the output's next chunks (strings), in order. */
  chunks: 'chunks',
  /**
   * HMAC-SHA256 (hex) of the entry's other fields under the instance's `ack_key`, required when the
   * register reply carried one (see `signAck`, docs/PROTOCOL.md §4).
   */
  sig: 'sig',
  /**
   * Optional on a completion or failure: the W3C `traceparent` of the worker's span that wrote it,
   * so the server's span applying it joins the task's trace. An invalid one is ignored.
   */
  traceparent: 'traceparent',
  /**
   * Optional on a probe's completion or failure: the agent's health check answer with its
   * dependencies, JSON text `{"ok":…,"dependencies":{"<name>":{"ok":…,"latency_ms":…,"detail":…}}}`
   * (probe-health.ts).
   */
  health: 'health',
} as const;

/** Fields of an entry on an agent's control stream (`keys.control`). */
export const ControlField = {
  /** `cancel`: stop the task named by `task_id`. */
  kind: 'kind',
  taskId: 'task_id',
  attempt: 'attempt',
} as const;

/** Fields of an entry on a callback topic. */
export const CallbackField = {
  taskId: 'task_id',
  status: 'status',
  capability: 'capability',
  agentId: 'agent_id',
  attempt: 'attempt',
  result: 'result',
  error: 'error',
  durationMs: 'duration_ms',
  completedAt: 'completed_at',
  /** A non-final item (`status` `progress`) of a task submitted with `stream: true`: JSON text. */
  progress: 'progress',
  /** A non-final item (`status` `chunk`): the chunk's text. */
  chunk: 'chunk',
} as const;
