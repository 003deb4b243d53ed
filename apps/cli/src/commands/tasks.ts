import type { TaskSearchReply } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { ms, table, time } from '../format.ts';

const USAGE =
  'usage: reach tasks list [--status s,...] [--capability <name>] [--agent <id>] [--error-code <code>] ' +
  '[--parent <task_id>] [--tenant <t>] [--since 1h] [--until <time>] [--min-duration-ms <ms>] ' +
  '[--limit 100] [--cursor <c>]';

function intOf(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new UsageError(
      `--${name} must be an integer from 0 to ${max}, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** `reach tasks list`: one page of `GET /v1/tasks`, newest first, and how to ask for the next. */
async function list(ctx: Context): Promise<number> {
  if (ctx.args.length > 1) throw new UsageError(USAGE);
  const o = ctx.options;
  const limit = intOf('limit', o.limit, 1000);
  if (limit === 0) throw new UsageError('--limit must be an integer from 1 to 1000, got "0"');
  const reply = await ctx.router.request<TaskSearchReply>('/v1/tasks', {
    query: {
      status: o.status,
      capability: o.capability,
      agent_id: o.agent,
      error_code: o['error-code'],
      parent_task_id: o.parent,
      tenant: o.tenant,
      since: o.since,
      until: o.until,
      min_duration_ms: intOf('min-duration-ms', o['min-duration-ms'], 2 ** 31),
      limit,
      cursor: o.cursor,
    },
  });
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  const next = reply.next_cursor ? `; next page: add --cursor ${reply.next_cursor}` : '';
  const from = reply.source === 'redis' ? 'from Redis' : 'from Redis and the InfluxDB archive';
  if (reply.items.length === 0) {
    printLines(ctx, `no tasks match (${from})${next}`);
    return 0;
  }
  const rows = reply.items.map((t) => [
    t.task_id,
    t.status,
    t.capability,
    t.agent_id || '-',
    time(t.created_at),
    t.duration_ms === undefined ? '-' : ms(t.duration_ms),
    t.error_code ?? '',
    t.archived ? 'archive' : 'redis',
  ]);
  printLines(
    ctx,
    table(['TASK', 'STATUS', 'CAPABILITY', 'AGENT', 'CREATED', 'TOOK', 'ERROR CODE', 'FROM'], rows),
    '',
    `${reply.items.length} task${reply.items.length === 1 ? '' : 's'} ${from}${next}`,
  );
  return 0;
}

/** `reach tasks list …`: task search. */
export async function tasksCommand(ctx: Context): Promise<number> {
  if (ctx.args[0] === 'list') return list(ctx);
  throw new UsageError(USAGE);
}
