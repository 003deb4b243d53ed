import { Type, type Static } from '@sinclair/typebox';
import { AgentView, FLEET_EVENT_KINDS } from '@agent-reach/protocol';

/** `GET /v1/console/agents` query. */
export const ConsoleAgentsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2000,
        default: 500,
        description: 'Most agents listed, by agent_id',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConsoleAgentsQuery = Static<typeof ConsoleAgentsQuery>;

/** An agent's outcomes among the tasks this router sent recently. */
export const RecentOutcomes = Type.Object({
  completed: Type.Integer(),
  failed: Type.Integer(),
  failures_by_code: Type.Record(Type.String(), Type.Integer(), {
    description: 'The failures by their error_code',
  }),
  success_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'null when no recent result',
  }),
});
export type RecentOutcomes = Static<typeof RecentOutcomes>;

/** One row of the console's agent table. */
export const ConsoleAgent = Type.Intersect([AgentView, Type.Object({ recent: RecentOutcomes })]);
export type ConsoleAgent = Static<typeof ConsoleAgent>;

/** `GET /v1/console/agents` reply. */
export const ConsoleAgentsReply = Type.Object({
  agents: Type.Array(ConsoleAgent),
  total: Type.Integer({ description: 'Registered agents; more than listed when over the limit' }),
  sampled_tasks: Type.Integer({ description: 'Recent tasks the success rates are computed from' }),
});
export type ConsoleAgentsReply = Static<typeof ConsoleAgentsReply>;

/** `GET /v1/console/latency` query. */
export const ConsoleLatencyQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: 200,
        description: 'Most points, newest kept',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConsoleLatencyQuery = Static<typeof ConsoleLatencyQuery>;

/** One recent task's stage latencies. */
export const LatencyPointSchema = Type.Object({
  task_id: Type.String(),
  capability: Type.String(),
  agent_id: Type.String(),
  status: Type.String(),
  at: Type.Integer({ description: 'When its last attempt was sent, epoch ms' }),
  delivery_ms: Type.Optional(Type.Number({ description: 'accepted → sent' })),
  receipt_ms: Type.Optional(Type.Number({ description: 'sent → received' })),
  execution_ms: Type.Optional(Type.Number({ description: 'received → completed or failed' })),
});

/** `GET /v1/console/latency` reply. */
export const ConsoleLatencyReply = Type.Object({
  points: Type.Array(LatencyPointSchema),
  now: Type.Integer({ description: "The router's clock, epoch ms: the chart's right edge" }),
});
export type ConsoleLatencyReply = Static<typeof ConsoleLatencyReply>;

/** `GET /v1/console/events` query. */
export const ConsoleEventsQuery = Type.Object(
  {
    backlog: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 500,
        default: 50,
        description: 'Recent events sent first',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConsoleEventsQuery = Static<typeof ConsoleEventsQuery>;

/** `GET /v1/console/events` headers. */
export const ConsoleEventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^\\d{1,20}-\\d{1,20}$',
      description: 'Resume after this event (browsers send it on reconnect)',
    }),
  ),
});

/** What each `data:` line of the event stream holds (documentation of the stream's items). */
export const ConsoleFleetEventSchema = Type.Object({
  id: Type.String({ description: 'Stream entry id; also the SSE event id' }),
  kind: Type.Union(FLEET_EVENT_KINDS.map((k) => Type.Literal(k))),
  at: Type.Integer(),
  agent_id: Type.Optional(Type.String()),
  task_id: Type.Optional(Type.String()),
  capability: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
  attempt: Type.Optional(Type.Integer()),
  epoch: Type.Optional(Type.Integer()),
});
