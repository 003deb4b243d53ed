import { Type, type Static } from '@sinclair/typebox';
import { SubmitBody } from './schemas.ts';

/** Shortest `every_ms` of a schedule. */
export const MIN_SCHEDULE_EVERY_MS = 1000;
/** Longest `every_ms` of a schedule: 366 days. */
export const MAX_SCHEDULE_EVERY_MS = 366 * 24 * 3600 * 1000;
/** A schedule id: a task fired by it is `<schedule_id>:<tick ms>`, so it holds no `:`. */
export const SCHEDULE_ID_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

/** `POST /v1/schedules` body: exactly one of `cron` and `every_ms`, and the task to submit at each tick. */
export const ScheduleBody = Type.Object(
  {
    cron: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'Cron expression (5 fields, or 6 with seconds first), read in `timezone`; not with every_ms',
      }),
    ),
    every_ms: Type.Optional(
      Type.Integer({
        minimum: MIN_SCHEDULE_EVERY_MS,
        maximum: MAX_SCHEDULE_EVERY_MS,
        description:
          'Fire every this many ms, the first tick this long after creation; not with cron',
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_+/-]{1,64}$',
        description: 'IANA time zone the cron expression is read in (default UTC)',
      }),
    ),
    task: SubmitBody,
  },
  { additionalProperties: false },
);
export type ScheduleBody = Static<typeof ScheduleBody>;

/** A schedule as the API shows it. */
export const ScheduleView = Type.Object({
  schedule_id: Type.String(),
  cron: Type.Optional(Type.String()),
  every_ms: Type.Optional(Type.Integer()),
  timezone: Type.Optional(Type.String()),
  task: Type.Unknown({ description: 'The submit body of every task it fires' }),
  paused: Type.Boolean(),
  next_run_at: Type.Integer({ description: 'Epoch ms of the next tick; 0 while paused' }),
  last_run_at: Type.Integer({ description: 'Epoch ms of the tick that last fired; 0 for none' }),
  last_task_id: Type.Optional(
    Type.String({ description: 'The task the last tick fired: `<schedule_id>:<tick ms>`' }),
  ),
  created_at: Type.Integer(),
});
export type ScheduleView = Static<typeof ScheduleView>;

/** `GET /v1/schedules` reply. */
export const ScheduleList = Type.Object({ schedules: Type.Array(ScheduleView) });
export type ScheduleList = Static<typeof ScheduleList>;

/** Path parameters naming a schedule (`<tenant>/<schedule_id>` names another tenant's: operators). */
export const ScheduleParams = Type.Object({
  schedule_id: Type.String({
    pattern: '^([a-z0-9][a-z0-9_-]{0,31}/)?[A-Za-z0-9_.-]{1,64}$',
  }),
});
export type ScheduleParams = Static<typeof ScheduleParams>;
