import type { AgentView } from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { ms, table } from '../format.ts';

/** `reach agents [--capability x]`: the registered agents, from registry-sync. */
export async function agentsCommand(ctx: Context): Promise<number> {
  if (ctx.args.length > 0) throw new UsageError('reach agents takes no arguments');
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
