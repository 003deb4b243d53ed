import type { StatsReply } from '@agent-reach/analytics';

type StatsGroup = StatsReply['groups'][number];
import { isInvalidWindowError, parseWindow } from '@agent-reach/analytics/window';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { ms, percent, rate, table, time } from '../format.ts';

function windowOf(value: string | undefined): string {
  const text = value ?? '15m';
  try {
    return parseWindow(text).literal;
  } catch (err: unknown) {
    if (isInvalidWindowError(err)) throw new UsageError(`--${err.message}`);
    throw err;
  }
}

/** `reach stats [--window 15m] [--by capability|agent] [--capability x]`: the four figures. */
export async function statsCommand(ctx: Context): Promise<number> {
  if (ctx.args.length > 0) throw new UsageError('reach stats takes no arguments');
  const by = ctx.options.by ?? 'capability';
  if (by !== 'capability' && by !== 'agent')
    throw new UsageError(`--by must be capability or agent, got ${JSON.stringify(by)}`);
  const reply = await ctx.router.request<StatsReply>('/v1/stats', {
    query: { window: windowOf(ctx.options.window), by, capability: ctx.options.capability },
  });
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  const scope = reply.capability ? ` for ${reply.capability}` : '';
  const head = `last ${reply.window}${scope}, by ${reply.by} (at ${time(reply.generated_at)})`;
  if (reply.groups.length === 0) {
    printLines(ctx, head, '', `no task events in the last ${reply.window}${scope}`);
    return 0;
  }
  const rows = reply.groups.map((g) => [
    g.key,
    percent(g.success_rate),
    `${g.outcomes.completed}/${g.outcomes.failed}/${g.outcomes.dead}`,
    `${ms(g.receipt_ms.mean)} / ${ms(g.receipt_ms.p95)}`,
    `${ms(g.execution_ms.mean)} / ${ms(g.execution_ms.p95)}`,
    rate(g.completion_rate.per_minute),
  ]);
  printLines(
    ctx,
    head,
    '',
    table(
      [
        by === 'agent' ? 'AGENT' : 'CAPABILITY',
        'SUCCESS',
        'OK/FAILED/DEAD',
        'RECEIPT mean / p95',
        'EXECUTION mean / p95',
        'DONE/MIN',
      ],
      rows,
    ),
    '',
    'success = completed / (completed + failed + dead); receipt = sent → received; execution = received → completed',
    ...failureLines(reply.groups),
  );
  return 0;
}

/** One line per group with failures: their counts by error_code, most frequent first. */
function failureLines(groups: readonly StatsGroup[]): string[] {
  const lines: string[] = [];
  for (const g of groups) {
    const codes = Object.entries(g.failures_by_code ?? {}).sort((a, b) => b[1] - a[1]);
    if (codes.length > 0)
      lines.push(`failures of ${g.key}: ${codes.map(([c, n]) => `${c} ×${n}`).join(', ')}`);
  }
  return lines.length > 0 ? ['', ...lines] : [];
}
