import type { AgentView, ObservationReport } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { ms, table } from '../format.ts';

const USAGE_PROMOTE = 'usage: reach agents promote <agent_id> [--weight <0.1-10>]';

/**
 * `reach agents promote <id> [--weight w]`: ends an agent's observation mode with an operator
 * key, so it gets caller traffic, and sets its routing weight.
 */
async function promote(ctx: Context): Promise<number> {
  const [agentId, ...rest] = ctx.args.slice(1);
  if (agentId === undefined || rest.length > 0) throw new UsageError(USAGE_PROMOTE);
  const text = ctx.options.weight;
  const weight = text === undefined ? undefined : Number(text);
  if (weight !== undefined && !(Number.isFinite(weight) && weight >= 0.1 && weight <= 10))
    throw new UsageError(`--weight must be a number from 0.1 to 10, got ${JSON.stringify(text)}`);
  const view = await ctx.registry.request<AgentView>(
    `/v1/agents/${encodeURIComponent(agentId)}/serve`,
    { method: 'POST', body: weight === undefined ? {} : { weight } },
  );
  if (ctx.json) printJson(ctx, view);
  else
    printLines(
      ctx,
      `${view.agent_id} serves callers now${weight === undefined ? '' : ` (weight ${weight})`}`,
    );
  return 0;
}

/**
 * The dependencies an agent's latest probe reported: those down first, each with its latency
 * when given (`model-gateway down 3000ms, db ok 4ms`); `-` when it reported none.
 */
export function dependenciesText(a: AgentView): string {
  const deps = Object.entries(a.health_check?.dependencies ?? {}).sort(
    ([an, ad], [bn, bd]) => Number(ad.ok) - Number(bd.ok) || an.localeCompare(bn),
  );
  if (deps.length === 0) return '-';
  return deps
    .map(
      ([name, d]) =>
        `${name} ${d.ok ? 'ok' : 'down'}${d.latency_ms !== undefined ? ` ${d.latency_ms}ms` : ''}`,
    )
    .join(', ');
}

const percent = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);
const millis = (x: number | null) => (x === null ? '-' : `${x}ms`);

/** `reach agents observation <id>`: an observing agent's shadow results against its peers'. */
async function observation(ctx: Context): Promise<number> {
  const [agentId, ...rest] = ctx.args.slice(1);
  if (agentId === undefined || rest.length > 0)
    throw new UsageError('usage: reach agents observation <agent_id>');
  const r = await ctx.registry.request<ObservationReport>(
    `/v1/agents/${encodeURIComponent(agentId)}/observation`,
  );
  if (ctx.json) {
    printJson(ctx, r);
    return 0;
  }
  printLines(
    ctx,
    `${r.agent_id}: ${r.mirrored} shadow tasks, ${r.compared} compared, agreement ${percent(r.agreement_rate)}`,
    table(
      ['', 'SUCCESS', 'P50', 'P95'],
      [
        [
          'observer',
          percent(r.observer.success_rate),
          millis(r.observer.p50_ms),
          millis(r.observer.p95_ms),
        ],
        [
          'serving',
          percent(r.serving.success_rate),
          millis(r.serving.p50_ms),
          millis(r.serving.p95_ms),
        ],
      ],
    ),
    ...r.disagreements.map(
      (d) =>
        `disagrees on ${d.task_id}${d.differing.length > 0 ? ` (${d.differing.join(', ')})` : ''}`,
    ),
  );
  return 0;
}

/** `reach agents [--capability x]`: the registered agents, from registry-sync. */
export async function agentsCommand(ctx: Context): Promise<number> {
  if (ctx.args[0] === 'promote') return promote(ctx);
  if (ctx.args[0] === 'observation') return observation(ctx);
  if (ctx.args.length > 0)
    throw new UsageError('reach agents takes no arguments but promote or observation');
  if (ctx.options.weight !== undefined) throw new UsageError(USAGE_PROMOTE);
  const capability = ctx.options.capability;
  const reply = await ctx.registry.request<{ agents: AgentView[] }>('/v1/agents');
  const agents = reply.agents
    .filter((a) => capability === undefined || a.capabilities.includes(capability))
    .sort((a, b) => a.agent_id.localeCompare(b.agent_id));
  if (ctx.json) {
    printJson(ctx, { agents });
    return 0;
  }
  if (agents.length === 0) {
    printLines(
      ctx,
      capability === undefined ? 'no agents registered' : `no agent serves ${capability}`,
    );
    return 0;
  }
  const rows = agents.map((a) => [
    a.agent_id,
    a.status,
    // The health score from the agent's recent outcomes (absent from a registry before it: 100).
    String(a.health_score ?? 100),
    `${a.inflight}/${a.max_concurrency}`,
    `${ms(a.lease_age_ms)} ago`,
    a.region,
    a.channel,
    a.capabilities.join(','),
    dependenciesText(a),
  ]);
  const byStatus = new Map<string, number>();
  for (const a of agents) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  const summary = [...byStatus].map(([s, n]) => `${n} ${s}`).join(', ');
  printLines(
    ctx,
    table(
      [
        'AGENT',
        'STATUS',
        'HEALTH',
        'INFLIGHT',
        'HEARTBEAT',
        'REGION',
        'CHANNEL',
        'CAPABILITIES',
        'DEPENDENCIES',
      ],
      rows,
    ),
    '',
    `${agents.length} agent${agents.length === 1 ? '' : 's'}: ${summary}`,
  );
  return 0;
}
