import type { Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { time } from '../format.ts';

/**
 * `reach follow <task_id>`: follows the task's events (`GET /v1/tasks/:task_id/events`) until its
 * final stage. Output chunks go to stdout as they come, as written; stages, progress and a
 * truncation go to stderr, one line each. `--json`: every event as one JSON line on stdout.
 * Exit 0 when the task completed, 1 when it ended dead or cancelled.
 */
export async function followCommand(ctx: Context): Promise<number> {
  const [taskId, ...rest] = ctx.args;
  if (taskId === undefined || rest.length > 0)
    throw new UsageError('usage: reach follow <task_id>');
  let last = '';
  for await (const e of ctx.router.events(taskId)) {
    if (ctx.json) {
      ctx.io.out(`${JSON.stringify(e)}\n`);
    } else if (e.event === 'chunk') {
      ctx.io.out(e.data.chunk);
    } else if (e.event === 'progress') {
      ctx.io.err(`[progress ${JSON.stringify(e.data.progress)}]\n`);
    } else if (e.event === 'truncated') {
      ctx.io.err(
        `[truncated: ${e.data.chunks} kept, ${e.data.bytes} bytes; later output dropped]\n`,
      );
    } else {
      const who =
        typeof e.data.agent_id === 'string' && e.data.agent_id ? ` ${e.data.agent_id}` : '';
      ctx.io.err(`[${e.data.stage} ${time(e.data.at)}${who}]\n`);
    }
    if (e.event === 'stage') last = e.data.stage;
  }
  return last === 'completed' ? 0 : 1;
}
