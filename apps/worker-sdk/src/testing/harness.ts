/** One test's world: a key prefix, a raw Redis client, the registry stand-in, and agents. */
import { randomBytes } from 'node:crypto';
import { encodeTask, type TaskMessage } from '@agent-reach/protocol';
import { randomPrefix, waitFor } from '@agent-reach/testkit';
import { Redis } from 'ioredis';
import { ReachAgent } from '../agent/agent.ts';
import type { ReachAgentOptions } from '../agent/options.ts';
import { startRegistryDouble, type RegistryDouble } from './registry-double.ts';
import { readStream, redisUrl, testLogger, type EntryRecord } from './support.ts';

/** What {@link startHarness} gives a test. */
export interface Harness {
  prefix: string;
  redis: Redis;
  registry: RegistryDouble;
  /** A new agent wired to this harness (not started). */
  agent(options: Partial<ReachAgentOptions> & Pick<ReachAgentOptions, 'handler'>): ReachAgent;
  /** XADDs a task to the agent's inbox the way the router does; returns the entry id. */
  addTask(
    agentId: string,
    task: Partial<TaskMessage> & Pick<TaskMessage, 'task_id'>,
  ): Promise<string>;
  /** XADDs a task to a capability's pool the way the router does (`capability` set to it); returns the entry id. */
  addPoolTask(
    capability: string,
    task: Partial<TaskMessage> & Pick<TaskMessage, 'task_id'>,
  ): Promise<string>;
  /** The acks stream. */
  acks(): Promise<EntryRecord[]>;
  /**
   * The stages one task's acks report, in order: each ack entry as written, a completion or
   * failure that carries `received_ago_ms` (its receipt folded in, see AckWriter) preceded by
   * the receipt it stands for — the identity fields with `stage: 'received'` — as the server
   * reads it.
   */
  acksOf(taskId: string): Promise<Record<string, string>[]>;
  /** Waits until {@link acksOf} has at least `n` entries for the task, and returns them. */
  waitForAcks(taskId: string, n: number): Promise<Record<string, string>[]>;
  /** Closes every agent and connection and deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

function fullTask(task: Partial<TaskMessage> & Pick<TaskMessage, 'task_id'>): TaskMessage {
  return {
    capability: 'echo',
    payload: 'null',
    attempt: 1,
    trace_id: `trace-${task.task_id}`,
    callback_topic: '',
    deadline_ms: 0,
    ...task,
  };
}

/** Builds a harness; call `cleanup()` in afterEach. */
export async function startHarness(
  opts: { heartbeatIntervalMs?: number; redisUrl?: string } = {},
): Promise<Harness> {
  const prefix = randomPrefix();
  const url = opts.redisUrl ?? redisUrl();
  const redis = new Redis(url);
  redis.on('error', () => undefined); // reconnects by itself; tests that restart Redis expect errors
  const registry = await startRegistryDouble({
    redis,
    prefix,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 5000,
  });
  const agents: ReachAgent[] = [];
  const acks = () => readStream(redis, registry.keys.acks());
  const acksOf = async (taskId: string): Promise<Record<string, string>[]> => {
    const out: Record<string, string>[] = [];
    for (const f of (await acks())
      .map((e) => e.fields)
      .filter((fields) => fields['task_id'] === taskId)) {
      if (f['received_ago_ms'] !== undefined) {
        const receipt: Record<string, string> = { stage: 'received' };
        for (const key of [
          'task_id',
          'agent_id',
          'instance_id',
          'epoch',
          'attempt',
          'pool',
          'message_id',
        ]) {
          const value = f[key];
          if (value !== undefined) receipt[key] = value;
        }
        out.push(receipt);
      }
      out.push(f);
    }
    return out;
  };

  return {
    prefix,
    redis,
    registry,
    agent(options) {
      const agent = new ReachAgent({
        registryUrl: registry.url,
        redisUrl: url,
        agentId: `agent-${randomBytes(4).toString('hex')}`,
        capabilities: ['echo'],
        logger: testLogger(),
        registerRetry: { baseMs: 20, capMs: 200 },
        redisRetry: { baseMs: 20, capMs: 200 },
        blockMs: 200,
        shutdownTimeoutMs: 5000,
        ...options,
      });
      agents.push(agent);
      return agent;
    },
    addTask(agentId, task) {
      return redis.xadd(
        registry.keys.inbox(agentId),
        '*',
        ...encodeTask(fullTask(task)),
      ) as Promise<string>;
    },
    addPoolTask(capability, task) {
      return redis.xadd(
        registry.keys.pool(capability),
        '*',
        ...encodeTask(fullTask({ ...task, capability })),
      ) as Promise<string>;
    },
    acks,
    acksOf,
    waitForAcks(taskId, n) {
      return waitFor(
        async () => {
          const acks = await acksOf(taskId);
          return acks.length >= n && acks;
        },
        { message: `${n} acks for ${taskId}` },
      );
    },
    async cleanup() {
      await Promise.all(agents.map((a) => a.close()));
      await registry.close();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
      await redis.quit();
    },
  };
}
