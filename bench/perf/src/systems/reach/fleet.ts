/**
 * Several Agent-Reach agents in one process for the `--topology` bench: one worker-sdk ReachAgent
 * per `AGENTS` entry (`<agent_id>=<capability>`, comma-separated), each with the no-op handler of
 * agent.ts. A fleet of 30 costs 3 processes instead of 30 on a 2-core machine; each agent keeps
 * its own connections, inbox and heartbeats, as separate processes would.
 *
 * Environment: REACH_REGISTRY_URL, REACH_ROUTER_URL, AGENTS, MAX_CONCURRENCY, and REDIS_URL or
 * REDIS_CLUSTER_NODES (read as the worker-sdk's redisConnectionFromEnv reads them).
 */
import { pino } from 'pino';
import { ReachAgent, redisConnectionFromEnv } from '@agent-reach/worker-sdk';
import { monoMs } from '../../clock.ts';
import { agentSpecs, announceReady, env, envInt, exitWithParent } from '../../load/child.ts';

const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' });
const specs = agentSpecs();

const agents = specs.map(
  ({ agentId, capability }) =>
    new ReachAgent({
      registryUrl: env('REACH_REGISTRY_URL'),
      routerUrl: env('REACH_ROUTER_URL'),
      ...redisConnectionFromEnv(),
      agentId,
      capabilities: [capability],
      maxConcurrency: envInt('MAX_CONCURRENCY', 100),
      logger: logger.child({ agent: agentId }),
      handler: () => Promise.resolve({ r: monoMs() }),
    }),
);

exitWithParent(async () => {
  await Promise.allSettled(agents.map((a) => a.close()));
}, 10_000);
for (const agent of agents) agent.start();
Promise.all(agents.map((a) => a.ready())).then(
  (regs) => announceReady({ agents: regs.map((r) => r.agent_id) }),
  (err: unknown) => {
    process.stderr.write(
      `an agent could not register: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
