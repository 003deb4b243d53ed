/**
 * An agent process for the chaos test: serves capability `chaos` with the worker-sdk, takes a
 * few ms to ~50 ms per task, and appends one line per handler start and end to a shared
 * execution log (O_APPEND, so lines from several processes never interleave), which the test
 * reads to count executions. A file survives the Redis kill that a Redis list would not.
 *
 * Environment: REACH_REGISTRY_URL, REACH_ROUTER_URL, REDIS_URL (and REDIS_CLUSTER_NODES), REACH_AGENT_ID, INSTANCE_ID, EXEC_LOG,
 * MAX_CONCURRENCY.
 */
import { appendFileSync } from 'node:fs';
import { pino } from 'pino';
import { installSignalHandlers, ReachAgent, redisConnectionFromEnv } from '@agent-reach/worker-sdk';
import { CHAOS_CAPABILITY, REGISTERED_MARK, type ExecLine } from './exec-log.ts';

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`chaos agent: ${name} is not set`);
  return value;
}

const agentId = need('REACH_AGENT_ID');
const execLog = need('EXEC_LOG');
const logger = pino({ name: 'chaos-agent', level: process.env['LOG_LEVEL'] ?? 'warn' });

function record(line: ExecLine): void {
  appendFileSync(execLog, `${JSON.stringify(line)}\n`);
}

/** 3–50 ms, fixed per task_id and attempt so a run is easy to reason about. */
function workMs(taskId: string, attempt: number): number {
  let h = attempt;
  for (const ch of taskId) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return 3 + (h % 48);
}

const agent = new ReachAgent({
  registryUrl: need('REACH_REGISTRY_URL'),
  routerUrl: need('REACH_ROUTER_URL'),
  // REDIS_URL, and REDIS_CLUSTER_NODES on the cluster leg.
  ...redisConnectionFromEnv(),
  agentId,
  instanceId: need('INSTANCE_ID'),
  capabilities: [CHAOS_CAPABILITY],
  maxConcurrency: Number(process.env['MAX_CONCURRENCY'] ?? '8'),
  blockMs: 500,
  shutdownTimeoutMs: 2000,
  logger,
  handler: async (task) => {
    const base = {
      task_id: task.taskId,
      attempt: task.attempt,
      agent_id: agentId,
      pid: process.pid,
    };
    record({ ev: 'start', at: Date.now(), ...base });
    await new Promise((resolve) => setTimeout(resolve, workMs(task.taskId, task.attempt)));
    record({ ev: 'done', at: Date.now(), ...base });
    return { payload: task.payload, pid: process.pid };
  },
});

installSignalHandlers(agent, { logger });
agent.on('registered', (reply) => {
  // The test waits for this line to know the instance is registered.
  process.stdout.write(
    `${REGISTERED_MARK} ${JSON.stringify({ agent_id: reply.agent_id, epoch: reply.epoch, pid: process.pid })}\n`,
  );
});
// A newer instance with this REACH_AGENT_ID took over: step down.
agent.on('fenced', () => {
  void agent.close().finally(() => process.exit(0));
});
agent.start();
