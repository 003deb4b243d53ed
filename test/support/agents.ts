import pino from 'pino';
import { ReachAgent, type ReachAgentOptions, type TaskContext } from '@agent-reach/worker-sdk';
import type { Stack } from './stack.ts';
import { seedNodes } from './redis.ts';

/** How many of an agent's last log lines are kept for a failure message. */
const LOG_LINES = 40;
const logs = new WeakMap<ReachAgent, string[]>();

/**
 * The last log lines (pino JSON, info and up) of an agent {@link startAgent} started: what a
 * failure message shows of why the agent did what it did.
 */
export function agentLogTail(agent: ReachAgent, count = 15): string {
  return (logs.get(agent) ?? []).slice(-count).join('\n');
}

/** Starts an in-process worker-sdk agent against the stack and waits until it is registered. */
export async function startAgent(
  stack: Stack,
  agentId: string,
  capabilities: string[],
  handler: (task: TaskContext) => Promise<unknown>,
  opts: {
    maxConcurrency?: number;
    instanceId?: string;
    apiKey?: string;
    inputSchemas?: ReachAgentOptions['inputSchemas'];
    channel?: ReachAgentOptions['channel'];
    observe?: boolean;
    health?: ReachAgentOptions['health'];
  } = {},
): Promise<ReachAgent> {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info', timestamp: pino.stdTimeFunctions.isoTime },
    {
      write: (line: string) => {
        lines.push(line.trimEnd());
        if (lines.length > LOG_LINES) lines.shift();
      },
    },
  );
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    agentId,
    capabilities,
    maxConcurrency: opts.maxConcurrency ?? 4,
    ...(opts.instanceId ? { instanceId: opts.instanceId } : {}),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.inputSchemas ? { inputSchemas: opts.inputSchemas } : {}),
    ...(opts.channel ? { channel: opts.channel } : {}),
    ...(opts.observe ? { observe: true } : {}),
    ...(opts.health ? { health: opts.health } : {}),
    handler,
    shutdownTimeoutMs: 2000,
    logger,
  });
  logs.set(agent, lines);
  agent.start();
  await agent.ready();
  return agent;
}
