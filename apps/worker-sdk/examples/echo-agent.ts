/**
 * A demo agent: serves one capability and answers every task with its payload.
 *
 *   node --import tsx apps/worker-sdk/examples/echo-agent.ts
 *
 * Environment: REACH_REGISTRY_URL, REDIS_URL (with REDIS_TLS_*, REDIS_USERNAME, REDIS_PASSWORD,
 * REDIS_SENTINELS: see redisConnectionFromEnv), REACH_AGENT_ID, REACH_KEY (docs/SETTINGS.md,
 * Clients; the earlier REGISTRY_URL and AGENT_ID still work, with a warning), REACH_CAPABILITY,
 * MAX_CONCURRENCY, and
 * FAIL_RATE (0–1, default 0): the share of tasks it fails on purpose (error_code DEMO_FAILURE),
 * to watch an agent that fails too often turn DEGRADED in `reach agents`, and DELAY_MS (default 0):
 * how long each task runs (until cancelled: the wait ends on the task's signal), to try
 * `reach cancel` on a running task. A payload `{"stream": "<text>"}` is streamed back word by word
 * (`ctx.stream`, with `ctx.progress`), STREAM_DELAY_MS apart (default 200), to follow a task with
 * `curl -N …/v1/tasks/<id>/events` or `reach follow <id>`. LOG_LEVEL (default info): each task is
 * logged at debug.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import { pino } from 'pino';
import {
  clientSettingFromEnv,
  installSignalHandlers,
  isReachClosedError,
  ReachAgent,
  redisConnectionFromEnv,
} from '@agent-reach/worker-sdk';

const env = process.env;
const logger = pino({ name: 'echo-agent', level: env['LOG_LEVEL'] || 'info' });

const maxConcurrency = Number(env['MAX_CONCURRENCY'] ?? '8');
const failRate = Number(env['FAIL_RATE'] ?? '0');
// DELAY_MS: each task takes this long (until cancelled), to try `reach cancel` on a running task.
const delayMs = Number(env['DELAY_MS'] ?? '0');
const streamDelayMs = Number(env['STREAM_DELAY_MS'] ?? '200');
const agent = new ReachAgent({
  // registryUrl and apiKey: REACH_REGISTRY_URL and REACH_KEY, read by the SDK itself.
  ...redisConnectionFromEnv(env),
  agentId: clientSettingFromEnv('agentId', env) ?? `echo-${randomBytes(4).toString('hex')}`,
  capabilities: [env['REACH_CAPABILITY'] ?? 'echo'],
  maxConcurrency,
  logger,
  handler: async (task) => {
    if (delayMs > 0) await setTimeout(delayMs, undefined, { signal: task.signal });
    const text = (task.payload as { stream?: unknown } | null)?.stream;
    if (typeof text === 'string') {
      // Word by word, with how far it got: what a follower of the task's events sees live.
      const words = text.split(/(?<= )/);
      for (const [i, word] of words.entries()) {
        task.stream(word);
        task.progress({ done: i + 1, of: words.length });
        await setTimeout(streamDelayMs, undefined, { signal: task.signal });
      }
    }
    if (Math.random() < failRate) {
      task.logger.warn({ capability: task.capability }, 'failing on purpose (FAIL_RATE)');
      throw Object.assign(new Error('failed on purpose (FAIL_RATE)'), { code: 'DEMO_FAILURE' });
    }
    // At debug: a line per task would bury everything else (LOG_LEVEL=debug shows it).
    task.logger.debug({ capability: task.capability }, 'echo');
    return task.payload;
  },
});

installSignalHandlers(agent, { logger });
// A newer instance with this agent id took over: step down. Exit 0 so a supervisor that restarts
// on failure does not start a third instance that would fence the new one in turn.
agent.on('fenced', () => {
  void agent.close().finally(() => process.exit(0));
});
agent.start();
agent.ready().then(
  (reg) =>
    logger.info(
      { agent_id: reg.agent_id, epoch: reg.epoch, stream: reg.stream },
      'echo agent ready',
    ),
  (err: unknown) => {
    if (isReachClosedError(err)) return; // stopped before it registered
    logger.error({ err }, 'echo agent could not register');
    process.exitCode = 1;
  },
);
