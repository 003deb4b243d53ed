/**
 * An Agent-Reach agent for the bench: the worker-sdk's ReachAgent with a no-op handler that
 * returns when it started the task (`r`, monotonic ms), so callers can time submit → received,
 * and the marks the caller splits the rest by (`e`, `m`: hops.ts).
 *
 * Environment: REACH_REGISTRY_URL, REACH_ROUTER_URL, REDIS_URL, REACH_AGENT_ID, BENCH_CAPABILITY, MAX_CONCURRENCY.
 */
import { pino } from 'pino';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { monoMs } from '../../clock.ts';
import { announceReady, env, envInt, exitWithParent } from '../../load/child.ts';

const agent = new ReachAgent({
  registryUrl: env('REACH_REGISTRY_URL'),
  routerUrl: env('REACH_ROUTER_URL'),
  redisUrl: env('REDIS_URL'),
  agentId: env('REACH_AGENT_ID'),
  capabilities: [env('BENCH_CAPABILITY')],
  maxConcurrency: envInt('MAX_CONCURRENCY', 100),
  logger: pino({
    level: process.env['LOG_LEVEL'] ?? 'warn',
    base: { agent: process.env['REACH_AGENT_ID'] },
  }),
  handler: (ctx) => Promise.resolve({ r: monoMs(), e: Date.now(), m: ctx.messageId }),
});

exitWithParent(() => agent.close(), 10_000);
agent.start();
agent.ready().then(
  (reg) => announceReady({ agent_id: reg.agent_id, epoch: reg.epoch }),
  (err: unknown) => {
    process.stderr.write(
      `agent could not register: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
