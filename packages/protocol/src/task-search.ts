import { Type, type Static } from '@sinclair/typebox';
import { ID_PATTERN } from './ids.ts';
import { TASK_STATUSES } from './states.ts';

/**
 * The HTTP shapes of task search (`GET /v1/tasks`, docs/PROTOCOL.md): filters in the query, one
 * page of matching tasks newest first (by `created_at`), and the cursor of the next page.
 */

/** Most tasks one page holds. */
export const MAX_SEARCH_LIMIT = 1000;
/** Tasks per page when the caller names no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 100;

/** A time bound: epoch ms, an ISO 8601 date, or an age back from now (`90s`, `15m`, `1h`, `7d`). */
export const SEARCH_TIME_PATTERN =
  '^([0-9]{1,15}|[0-9]{1,9}(ms|s|m|h|d)|[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9]{2}:?[0-9]{2})?)?)$';

const Time = (description: string) =>
  Type.String({ pattern: SEARCH_TIME_PATTERN, maxLength: 40, description });
const IdFilter = (description: string) => Type.String({ pattern: ID_PATTERN, description });

/** `GET /v1/tasks` query. */
export const TaskSearchQuery = Type.Object(
  {
    capability: Type.Optional(IdFilter('Only tasks of this capability')),
    status: Type.Optional(
      Type.String({
        pattern: `^(${TASK_STATUSES.join('|')})(,(${TASK_STATUSES.join('|')}))*$`,
        description: 'Only tasks in one of these statuses, comma-separated (`dead,cancelled`)',
      }),
    ),
    agent_id: Type.Optional(IdFilter('Only tasks whose last attempt went to this agent')),
    tenant: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:-]{1,64}$',
        description: 'Only this tenant’s tasks (operators; others see their own tenant only)',
      }),
    ),
    error_code: Type.Optional(
      Type.String({
        pattern: '^[A-Z][A-Z0-9_]{0,63}$',
        description: 'Only tasks whose last failure had this code (`MODEL_NOT_LOADED`)',
      }),
    ),
    parent_task_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Only the tasks submitted with this parent (bare, or `<tenant>/<id>`)',
      }),
    ),
    since: Type.Optional(
      Time('Created at or after this (default: REACH_TASK_RETENTION_S ago, what Redis holds)'),
    ),
    until: Type.Optional(Time('Created at or before this (default: now)')),
    min_duration_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Only ended tasks that took at least this long, created to end',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_SEARCH_LIMIT,
        default: DEFAULT_SEARCH_LIMIT,
        description: 'Most tasks in the page',
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{1,400}$',
        description: 'The `next_cursor` of the page before',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TaskSearchQuery = Static<typeof TaskSearchQuery>;

/** One task of a search page. */
export const TaskSummary = Type.Object({
  task_id: Type.String({ description: 'As the caller names it (`<tenant>/<id>` for another’s)' }),
  tenant: Type.String(),
  status: Type.String(),
  capability: Type.String(),
  agent_id: Type.String({ description: 'The agent of the last attempt; empty when none' }),
  attempts: Type.Integer(),
  created_at: Type.Integer({ description: 'Epoch ms' }),
  ended_at: Type.Optional(Type.Integer({ description: 'Epoch ms, once final' })),
  duration_ms: Type.Optional(Type.Integer({ description: 'Created to end, once final' })),
  error_code: Type.Optional(Type.String({ description: 'The last failure’s code' })),
  parent_task_id: Type.Optional(Type.String()),
  archived: Type.Optional(
    Type.Boolean({ description: 'Read from the InfluxDB archive (its Redis state expired)' }),
  ),
});
export type TaskSummary = Static<typeof TaskSummary>;

/** Which store answered a search page. */
export const SEARCH_SOURCES = ['redis', 'redis+influxdb'] as const;
export type SearchSource = (typeof SEARCH_SOURCES)[number];

/** `GET /v1/tasks` reply. */
export const TaskSearchReply = Type.Object({
  items: Type.Array(TaskSummary),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next page; null when there is none',
  }),
  source: Type.Union(
    SEARCH_SOURCES.map((s) => Type.Literal(s)),
    {
      description:
        '`redis` when the range lies within REACH_TASK_RETENTION_S (or InfluxDB is not configured), `redis+influxdb` when the archive was asked too',
    },
  ),
});
export type TaskSearchReply = Static<typeof TaskSearchReply>;

/** A position in the newest-first order: a page holds tasks strictly before it. */
export interface SearchPosition {
  /** created_at, epoch ms. */
  at: number;
  /** The stored (scoped) task_id; ties at one `at` go by id, descending. */
  id: string;
}

/** True when `a` comes before `b` newest first (later, or at the same time with a greater id). */
export function isNewer(a: SearchPosition, b: SearchPosition): boolean {
  return a.at !== b.at ? a.at > b.at : a.id > b.id;
}

/** The cursor text of a position (base64url of `<at>:<id>`). */
export function encodeSearchCursor(p: SearchPosition): string {
  return Buffer.from(`${p.at}:${p.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined when it is not one of {@link encodeSearchCursor}'s. */
export function decodeSearchCursor(text: string): SearchPosition | undefined {
  const raw = Buffer.from(text, 'base64url').toString('utf8');
  const colon = raw.indexOf(':');
  if (colon <= 0) return undefined;
  const at = Number(raw.slice(0, colon));
  const id = raw.slice(colon + 1);
  if (!Number.isSafeInteger(at) || at < 0 || id.length === 0 || id.length > 300) return undefined;
  return { at, id };
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * The epoch ms a time bound names ({@link SEARCH_TIME_PATTERN}), `now` minus an age, or undefined
 * when it names no time.
 */
export function parseSearchTime(text: string, now: number): number | undefined {
  const age = /^([0-9]{1,9})(ms|s|m|h|d)$/.exec(text);
  if (age) return now - Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS];
  if (/^[0-9]{1,15}$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
