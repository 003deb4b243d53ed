import { Type, type Static } from '@sinclair/typebox';
import { QueueStats } from '@agent-reach/protocol';

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/** A latency figure over the window, milliseconds. `mean`/`p95` are null without samples. */
export const LatencyFigure = Type.Object({
  mean: NullableNumber,
  p95: NullableNumber,
  count: Type.Integer({ description: 'Points with the field, i.e. samples behind mean and p95' }),
});
export type LatencyFigure = Static<typeof LatencyFigure>;

/** The four figures of one capability or one agent over the window. */
export const FigureGroup = Type.Object({
  key: Type.String({ description: 'The capability or the agent_id, as `by` says' }),
  success_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description:
      'completed / (completed + failed + dead) points in the window; null without outcomes',
  }),
  outcomes: Type.Object({
    completed: Type.Integer(),
    failed: Type.Integer(),
    dead: Type.Integer(),
    total: Type.Integer({ description: 'completed + failed + dead' }),
  }),
  receipt_ms: LatencyFigure,
  execution_ms: Type.Object({
    mean: NullableNumber,
    p95: NullableNumber,
    count: Type.Integer(),
    handler_mean: Type.Union([Type.Number(), Type.Null()], {
      description: 'duration_ms reported by the worker',
    }),
    handler_p95: NullableNumber,
  }),
  completion_rate: Type.Object({
    completed: Type.Integer(),
    per_second: Type.Number(),
    per_minute: Type.Number(),
  }),
  stages: Type.Record(Type.String(), Type.Integer(), {
    description: 'Points per stage in the window',
  }),
  failures_by_code: Type.Record(Type.String(), Type.Integer(), {
    description:
      'Failed attempts in the window by their error_code (HANDLER_ERROR when the worker named none; UNKNOWN for points from before codes)',
  }),
});
export type FigureGroup = Static<typeof FigureGroup>;

/** `GET /v1/stats` reply. */
export const StatsReply = Type.Object({
  window: Type.String(),
  window_s: Type.Integer(),
  by: Type.Union([Type.Literal('capability'), Type.Literal('agent')]),
  capability: Type.Union([Type.String(), Type.Null()]),
  generated_at: Type.Integer({ description: 'Epoch milliseconds' }),
  groups: Type.Array(FigureGroup),
  queues: Type.Optional(
    Type.Array(QueueStats, {
      description:
        'The waiting rooms now, from Redis, as GET /v1/queues gives them (the same tenant scope)',
    }),
  ),
});
export type StatsReply = Static<typeof StatsReply>;

/** One step of a capability's series. */
export const SeriesPoint = Type.Object(
  {
    at: Type.Integer({ description: 'Start of the step, epoch milliseconds' }),
    completed: Type.Integer({ description: 'Tasks completed in the step' }),
    failed: Type.Integer({ description: 'Failed attempts in the step' }),
    dead: Type.Integer({ description: 'Tasks dead-lettered in the step' }),
    execution_mean_ms: Type.Union([Type.Number(), Type.Null()], {
      description: 'Mean execution time (received → completed) of the completions; null without',
    }),
    execution_p95_ms: Type.Union([Type.Number(), Type.Null()], {
      description: 'Its 95th percentile; null without completions',
    }),
  },
  { additionalProperties: false },
);
export type SeriesPoint = Static<typeof SeriesPoint>;

/** `GET /v1/stats/series` reply. */
export const SeriesReply = Type.Object({
  capability: Type.String(),
  window: Type.String(),
  window_s: Type.Integer(),
  step: Type.String({ description: 'The step as an InfluxQL duration, e.g. 1m or 15s' }),
  step_ms: Type.Integer(),
  generated_at: Type.Integer({ description: 'Epoch milliseconds' }),
  points: Type.Array(SeriesPoint, {
    description: 'One per step, oldest first; the last is the step now running',
  }),
});
export type SeriesReply = Static<typeof SeriesReply>;

/** One stage of a task's timeline with the gap from the stage before it. */
export const TimelineStage = Type.Object(
  {
    stage: Type.String(),
    at: Type.Integer({ description: 'Epoch milliseconds' }),
    gap_ms: Type.Number({ description: 'Milliseconds since the previous stage; 0 for the first' }),
    agent_id: Type.Union([Type.String(), Type.Null()]),
    attempt: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Optional(Type.Number()),
    reason: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type TimelineStage = Static<typeof TimelineStage>;

/** `GET /v1/tasks/:task_id/timeline` reply. */
export const TimelineReply = Type.Object({
  task_id: Type.String(),
  source: Type.Union([Type.Literal('redis'), Type.Literal('influxdb')]),
  /** The task whose handling submitted this one (as `GET /v1/tasks/:task_id` shows it). */
  parent_task_id: Type.Optional(Type.String()),
  /** The tasks submitted while handling this one (as `GET /v1/tasks/:task_id` lists them). */
  children: Type.Optional(Type.Array(Type.String())),
  stages: Type.Array(TimelineStage),
});
export type TimelineReply = Static<typeof TimelineReply>;
