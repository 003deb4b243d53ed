import { randomUUID } from 'node:crypto';
import {
  FINAL_TASK_STATUSES,
  MAX_TASK_PRIORITY,
  MIN_TASK_PRIORITY,
  type SubmitBody,
  type SubmitReply,
  type TaskView,
} from '@agent-reach/protocol';
import { seconds } from '../args.ts';
import { printJson, printLines, type Context } from '../context.ts';
import { isReachConnectionError, isReachHttpError } from '@agent-reach/worker-sdk/http';
import { EXIT, UsageError } from '../errors.ts';
import { inline, ms } from '../format.ts';
import { ProgressLine } from '../progress.ts';
import { parsePayload } from '../payload.ts';

const FINAL: ReadonlySet<string> = new Set(FINAL_TASK_STATUSES);

function bodyOf(ctx: Context): SubmitBody & { task_id: string } {
  const [capability, json, ...rest] = ctx.args;
  if (capability === undefined || json === undefined || rest.length > 0) {
    throw new UsageError('usage: reach submit <capability> <json> [--wait] [--timeout 30]');
  }
  const o = ctx.options;
  // A task_id of our own, so that a submission whose answer was lost can be sent again as the
  // same task (the router answers a repeat with the existing one and never runs it twice).
  const body: SubmitBody & { task_id: string } = {
    task_id: o['task-id'] ?? randomUUID(),
    capability,
    payload: parsePayload(json),
  };
  if (o['trace-id'] !== undefined) body.trace_id = o['trace-id'];
  if (o['callback-topic'] !== undefined) body.callback_topic = o['callback-topic'];
  if (o['task-timeout'] !== undefined)
    body.timeout_s = Math.ceil(seconds('task-timeout', o['task-timeout'], 0));
  if (o.priority !== undefined) body.priority = priorityOf(o.priority);
  if (o.fallback !== undefined) {
    body.fallback_capabilities = o.fallback.split(',').filter((c) => c !== '');
    if (body.fallback_capabilities.length === 0)
      throw new UsageError(
        '--fallback takes capabilities separated by commas, e.g. --fallback a,b',
      );
  }
  if (o['delay-ms'] !== undefined && o['run-at'] !== undefined)
    throw new UsageError('give --delay-ms or --run-at, not both');
  if (o['delay-ms'] !== undefined) {
    const delay = Number(o['delay-ms']);
    if (!Number.isInteger(delay) || delay < 0)
      throw new UsageError(`--delay-ms must be a whole number of ms, got ${o['delay-ms']}`);
    body.delay_ms = delay;
  }
  if (o['run-at'] !== undefined) body.run_at = runAtOf(o['run-at']);
  return body;
}

/** `--run-at`: epoch ms, or an ISO time such as 2027-01-31T09:00:00Z. */
function runAtOf(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(n))
    throw new UsageError(`--run-at must be an ISO time or epoch ms, got ${JSON.stringify(text)}`);
  return n;
}

/** `--priority`: an integer from MIN_TASK_PRIORITY to MAX_TASK_PRIORITY. */
function priorityOf(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < MIN_TASK_PRIORITY || n > MAX_TASK_PRIORITY)
    throw new UsageError(
      `--priority must be an integer from ${MIN_TASK_PRIORITY} to ${MAX_TASK_PRIORITY} (9 most urgent), got ${JSON.stringify(text)}`,
    );
  return n;
}

const sleep = (msToWait: number) => new Promise<void>((resolve) => setTimeout(resolve, msToWait));

/** Polls the task until it ends or `timeoutMs` passes; returns the last view seen. */
async function waitForEnd(
  ctx: Context,
  taskId: string,
  timeoutMs: number,
  progress: ProgressLine,
): Promise<TaskView> {
  const started = Date.now();
  let delay = 100;
  for (;;) {
    const view = await ctx.router.request<TaskView>(`/v1/tasks/${encodeURIComponent(taskId)}`);
    const elapsed = Date.now() - started;
    const path = view.timeline.map((e) => e.stage).join(' → ');
    progress.update(`task ${taskId} ${path || view.status} · ${(elapsed / 1000).toFixed(1)} s`);
    if (FINAL.has(view.status) || elapsed >= timeoutMs) return view;
    await sleep(Math.min(delay, Math.max(0, timeoutMs - elapsed)));
    delay = Math.min(1000, Math.round(delay * 1.5));
  }
}

function took(view: TaskView): string {
  const last = view.timeline.at(-1)?.at;
  return last !== undefined && view.created_at > 0 ? ` in ${ms(last - view.created_at)}` : '';
}

/** `reach submit <capability> <json> [--wait] [--timeout 30]`. */
export async function submitCommand(ctx: Context): Promise<number> {
  const body = bodyOf(ctx);
  const waitS = seconds('timeout', ctx.options.timeout, 30);
  if (ctx.options.timeout !== undefined && !ctx.options.wait)
    throw new UsageError('--timeout goes with --wait');
  let reply: SubmitReply;
  try {
    reply = await ctx.router.request<SubmitReply>('/v1/tasks', { body });
  } catch (err: unknown) {
    // A 429, a 5xx or no answer: the task may have been accepted all the same.
    if (
      (isReachHttpError(err) && (err.status === 429 || err.status >= 500)) ||
      isReachConnectionError(err)
    ) {
      ctx.io.err(
        `reach: task ${body.task_id} may have been accepted before this failure; to retry it without running it twice, add --task-id ${body.task_id}\n`,
      );
    }
    throw err;
  }
  if (!ctx.options.wait) {
    if (ctx.json) printJson(ctx, reply);
    else printLines(ctx, `task ${reply.task_id} ${reply.status} to ${reply.agent_id || '-'}`);
    return EXIT.ok;
  }
  const progress = new ProgressLine(ctx.io, ctx.options.progress === true || ctx.io.stderrIsTTY);
  let view: TaskView;
  try {
    view = await waitForEnd(ctx, reply.task_id, waitS * 1000, progress);
  } finally {
    progress.done();
  }
  if (ctx.json) printJson(ctx, view);
  if (!FINAL.has(view.status)) {
    ctx.io.err(
      `reach: task ${view.task_id} is still ${view.status} after ${waitS} s; it goes on — see reach task ${view.task_id}\n`,
    );
    return EXIT.waitTimeout;
  }
  if (view.status === 'completed') {
    if (!ctx.json) {
      printLines(
        ctx,
        `task ${view.task_id} completed by ${view.agent_id} (attempt ${view.attempts})${took(view)}`,
        JSON.stringify(view.result, null, 2) ?? 'null',
      );
    }
    return EXIT.ok;
  }
  if (!ctx.json) {
    const why = view.dead_reason;
    const lines = [
      `task ${view.task_id} ${view.status}${why ? ` (${why})` : ''} after ${view.attempts} attempt${view.attempts === 1 ? '' : 's'}`,
    ];
    if (view.error !== undefined) lines.push(`error: ${view.error}`);
    else if (view.result !== undefined) lines.push(`result: ${inline(view.result)}`);
    printLines(ctx, ...lines);
  }
  return EXIT.taskFailed;
}
