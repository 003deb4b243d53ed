import pino from 'pino';
import { ReachAgent, type ReachAgentOptions, type TaskContext } from '@agent-reach/worker-sdk';
import type { Stack } from './stack.ts';
import { seedNodes } from './redis.ts';

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
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  return agent;
}
