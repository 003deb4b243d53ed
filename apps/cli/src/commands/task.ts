import type { TimelineReply } from '@agent-reach/analytics';
import type { TaskView } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { isReachHttpError } from '@agent-reach/worker-sdk/http';
import { UsageError } from '../errors.ts';
import { gap, inline, ms, table, time } from '../format.ts';

async function viewOf(ctx: Context, taskId: string): Promise<TaskView | undefined> {
  try {
    return await ctx.router.request<TaskView>(`/v1/tasks/${encodeURIComponent(taskId)}`);
  } catch (err: unknown) {
    // Expired from Redis: the timeline still comes from InfluxDB.
    if (isReachHttpError(err) && err.code === 'TASK_NOT_FOUND') return undefined;
    throw err;
  }
}

/**
 * `reach task <task_id>`: the task's state and its timeline with the gap between stages, and its
 * parent and children (tasks submitted while handling one another).
 */
export async function taskCommand(ctx: Context): Promise<number> {
  const [taskId, ...rest] = ctx.args;
  if (taskId === undefined || rest.length > 0) throw new UsageError('usage: reach task <task_id>');
  const timeline = await ctx.router.request<TimelineReply>(
    `/v1/tasks/${encodeURIComponent(taskId)}/timeline`,
  );
  const view = await viewOf(ctx, taskId);
  if (ctx.json) {
    printJson(ctx, { ...timeline, task: view ?? null });
    return 0;
  }
  const head = view
    ? `task ${taskId}  ${view.status}  capability ${view.capability}  agent ${view.agent_id || '-'}  attempts ${view.attempts}`
    : `task ${taskId}  (its state expired from Redis; stages from InfluxDB)`;
  // From the task's Redis timeline: each failed attempt's error_code, and each send to an agent
  // short of HEALTHY (a DEGRADED one taking what HEALTHY agents had no room for).
  const codeOf = new Map<number, string>();
  const sentTo = new Map<number, string>();
  for (const e of view?.timeline ?? []) {
    const entry = e as { error_code?: unknown; routing?: { agent_status?: unknown } };
    if (e.stage === 'failed' && typeof entry.error_code === 'string')
      codeOf.set(e.attempt ?? 0, entry.error_code);
    if (e.stage === 'sent' && typeof entry.routing?.agent_status === 'string')
      sentTo.set(e.attempt ?? 0, entry.routing.agent_status);
  }
  const noteOf = (s: (typeof timeline.stages)[number]): string | undefined => {
    const code = s.stage === 'failed' ? codeOf.get(s.attempt ?? 0) : undefined;
    const status = s.stage === 'sent' ? sentTo.get(s.attempt ?? 0) : undefined;
    const note = s.duration_ms !== undefined ? `handler ${ms(s.duration_ms)}` : s.reason;
    if (code !== undefined) return note ? `${code} · ${note}` : code;
    if (status !== undefined)
      return note ? `to a ${status} agent · ${note}` : `to a ${status} agent`;
    return note;
  };
  const rows = timeline.stages.map((s, i) => [
    s.stage,
    time(s.at),
    gap(s.gap_ms, i === 0),
    s.agent_id,
    s.attempt,
    noteOf(s),
  ]);
  const first = timeline.stages[0]?.at;
  const last = timeline.stages.at(-1)?.at;
  const lines = [head, '', table(['STAGE', 'AT', 'GAP', 'AGENT', 'ATTEMPT', 'NOTE'], rows), ''];
  lines.push(
    `${timeline.stages.length} stages over ${first !== undefined && last !== undefined ? ms(last - first) : '-'} (source: ${timeline.source})`,
  );
  // The links both ways: the task that submitted this one, the ones it submitted.
  const parent = view?.parent_task_id ?? timeline.parent_task_id;
  const children = view?.children ?? timeline.children ?? [];
  if (parent !== undefined) lines.push(`parent: ${parent}`);
  if (children.length > 0) lines.push(`children: ${children.join(', ')}`);
  if (view?.result !== undefined) lines.push(`result: ${inline(view.result)}`);
  if (view?.error !== undefined) lines.push(`error: ${view.error}`);
  if (view?.dead_reason !== undefined) lines.push(`dead: ${view.dead_reason}`);
  printLines(ctx, ...lines);
  return 0;
}
