import type { DlqReply, ReplayReply } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, time } from '../format.ts';

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new UsageError(`--limit must be an integer from 1 to 1000, got ${JSON.stringify(value)}`);
  return n;
}

async function list(ctx: Context): Promise<number> {
  if (ctx.args.length > 1)
    throw new UsageError('usage: reach dlq list [--capability <name>] [--limit 100]');
  const reply = await ctx.router.request<DlqReply>('/v1/dlq', {
    query: { capability: ctx.options.capability, limit: limitOf(ctx.options.limit) },
  });
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  if (reply.items.length === 0) {
    printLines(
      ctx,
      ctx.options.capability ? `no dead letters for ${ctx.options.capability}` : 'no dead letters',
    );
    return 0;
  }
  const rows = reply.items.map((d) => [
    d.task_id,
    d.capability,
    d.reason,
    d.attempts,
    time(d.dead_at),
    d.error?.slice(0, 60),
  ]);
  printLines(
    ctx,
    table(['TASK', 'CAPABILITY', 'REASON', 'ATTEMPTS', 'DEAD AT', 'ERROR'], rows),
    '',
    `${reply.items.length} dead letter${reply.items.length === 1 ? '' : 's'}; replay one with: reach dlq replay <task_id>`,
  );
  return 0;
}

async function replay(ctx: Context): Promise<number> {
  const [, taskId, ...rest] = ctx.args;
  if (taskId === undefined || rest.length > 0)
    throw new UsageError('usage: reach dlq replay <task_id>');
  if (ctx.options.capability !== undefined || ctx.options.limit !== undefined) {
    throw new UsageError('reach dlq replay takes only a task_id');
  }
  const reply = await ctx.router.request<ReplayReply>(
    `/v1/dlq/${encodeURIComponent(taskId)}/replay`,
    { method: 'POST' },
  );
  if (ctx.json) printJson(ctx, reply);
  else
    printLines(
      ctx,
      `replayed ${reply.task_id}: attempt ${reply.attempt}, ${reply.status}; follow it with: reach task ${reply.task_id}`,
    );
  return 0;
}

/** `reach dlq list [--capability x] [--limit n]` and `reach dlq replay <task_id>`. */
export async function dlqCommand(ctx: Context): Promise<number> {
  switch (ctx.args[0]) {
    case 'list':
      return list(ctx);
    case 'replay':
      return replay(ctx);
    default:
      throw new UsageError(
        'usage: reach dlq list [--capability <name>] | reach dlq replay <task_id>',
      );
  }
}
