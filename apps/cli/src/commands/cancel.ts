import type { CancelReply } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';

/**
 * `reach cancel <task_id>`: the task is final at once (and its children); the agent running it
 * is told to stop. A finished task is refused with ALREADY_FINAL (exit 3).
 */
export async function cancelCommand(ctx: Context): Promise<number> {
  const [taskId, ...rest] = ctx.args;
  if (taskId === undefined || rest.length > 0)
    throw new UsageError('usage: reach cancel <task_id>');
  const reply = await ctx.router.request<CancelReply>(
    `/v1/tasks/${encodeURIComponent(taskId)}/cancel`,
    { method: 'POST' },
  );
  if (ctx.json) printJson(ctx, reply);
  else
    printLines(
      ctx,
      `cancelled ${reply.task_id}; when its agent stopped shows in: reach task ${reply.task_id}`,
    );
  return 0;
}
