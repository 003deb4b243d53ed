import type { AgentView } from '@agent-reach/protocol';
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

/** `reach agents [--capability x]`: the registered agents, from registry-sync. */
export async function agentsCommand(ctx: Context): Promise<number> {
  if (ctx.args[0] === 'promote') return promote(ctx);
  if (ctx.args.length > 0) throw new UsageError('reach agents takes no arguments but promote');
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
  ]);
  const byStatus = new Map<string, number>();
  for (const a of agents) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  const summary = [...byStatus].map(([s, n]) => `${n} ${s}`).join(', ');
  printLines(
    ctx,
    table(
      ['AGENT', 'STATUS', 'HEALTH', 'INFLIGHT', 'HEARTBEAT', 'REGION', 'CHANNEL', 'CAPABILITIES'],
      rows,
    ),
    '',
    `${agents.length} agent${agents.length === 1 ? '' : 's'}: ${summary}`,
  );
  return 0;
}
