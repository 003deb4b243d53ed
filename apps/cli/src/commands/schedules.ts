import type { ScheduleBody, ScheduleList, ScheduleView, SubmitBody } from '@agent-reach/protocol';
import { seconds } from '../args.ts';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { inline, table, time } from '../format.ts';
import { parsePayload } from '../payload.ts';

const USAGE_CREATE =
  "usage: reach schedules create <capability> <json> (--every-ms <ms> | --cron '<expr>' [--timezone <IANA>]) [--task-timeout <s>] [--callback-topic <topic>]";

function cadence(s: ScheduleView): string {
  if (s.every_ms !== undefined) return `every ${s.every_ms} ms`;
  return `cron ${s.cron ?? '?'}${s.timezone && s.timezone !== 'UTC' ? ` (${s.timezone})` : ''}`;
}

function summary(s: ScheduleView): string {
  const next = s.paused ? 'paused' : `next ${time(s.next_run_at)}`;
  return `schedule ${s.schedule_id}: ${cadence(s)}, ${next}${s.last_task_id ? `, last task ${s.last_task_id}` : ''}`;
}

async function create(ctx: Context): Promise<number> {
  const [, capability, json, ...rest] = ctx.args;
  const o = ctx.options;
  if (capability === undefined || json === undefined || rest.length > 0)
    throw new UsageError(USAGE_CREATE);
  if ((o['every-ms'] === undefined) === (o.cron === undefined))
    throw new UsageError(`give one of --every-ms and --cron\n${USAGE_CREATE}`);
  const task: SubmitBody = { capability, payload: parsePayload(json) };
  if (o['callback-topic'] !== undefined) task.callback_topic = o['callback-topic'];
  if (o['task-timeout'] !== undefined)
    task.timeout_s = Math.ceil(seconds('task-timeout', o['task-timeout'], 0));
  const body: ScheduleBody = { task };
  if (o['every-ms'] !== undefined) {
    const every = Number(o['every-ms']);
    if (!Number.isInteger(every) || every < 1000)
      throw new UsageError(`--every-ms must be a whole number ≥ 1000, got ${o['every-ms']}`);
    body.every_ms = every;
  }
  if (o.cron !== undefined) body.cron = o.cron;
  if (o.timezone !== undefined) body.timezone = o.timezone;
  const reply = await ctx.router.request<ScheduleView>('/v1/schedules', { body });
  if (ctx.json) printJson(ctx, reply);
  else printLines(ctx, summary(reply), `each tick fires the task ${reply.schedule_id}:<tick ms>`);
  return 0;
}

async function list(ctx: Context): Promise<number> {
  if (ctx.args.length > 1) throw new UsageError('usage: reach schedules list');
  const reply = await ctx.router.request<ScheduleList>('/v1/schedules');
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  if (reply.schedules.length === 0) {
    printLines(ctx, 'no schedules; make one with reach schedules create');
    return 0;
  }
  const rows = reply.schedules.map((s) => [
    s.schedule_id,
    cadence(s),
    s.paused ? 'paused' : time(s.next_run_at),
    s.last_task_id ?? '-',
    inline((s.task as { capability?: unknown }).capability),
  ]);
  printLines(ctx, table(['SCHEDULE', 'CADENCE', 'NEXT', 'LAST TASK', 'CAPABILITY'], rows));
  return 0;
}

async function act(ctx: Context, action: 'pause' | 'resume' | 'delete'): Promise<number> {
  const [, id, ...rest] = ctx.args;
  if (id === undefined || rest.length > 0)
    throw new UsageError(`usage: reach schedules ${action} <schedule_id>`);
  const path = `/v1/schedules/${encodeURIComponent(id)}`;
  if (action === 'delete') {
    await ctx.router.request<undefined>(path, { method: 'DELETE' });
    if (ctx.json) printJson(ctx, { schedule_id: id, deleted: true });
    else printLines(ctx, `deleted ${id}: it fires no more (the tasks it fired stay)`);
    return 0;
  }
  const reply = await ctx.router.request<ScheduleView>(`${path}/${action}`, {
    method: 'POST',
    body: {},
  });
  if (ctx.json) printJson(ctx, reply);
  else printLines(ctx, summary(reply));
  return 0;
}

/** `reach schedules create|list|pause|resume|delete`: recurring tasks, on the router. */
export async function schedulesCommand(ctx: Context): Promise<number> {
  const sub = ctx.args[0];
  switch (sub) {
    case 'create':
      return create(ctx);
    case 'list':
      return list(ctx);
    case 'pause':
    case 'resume':
    case 'delete':
      return act(ctx, sub);
    default:
      throw new UsageError(
        'usage: reach schedules create|list|pause|resume|delete (see reach --help)',
      );
  }
}
