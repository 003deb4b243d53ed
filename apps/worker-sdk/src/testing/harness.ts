/** One test's world: a key prefix, a raw Redis client, the registry stand-in, and agents. */
import { randomBytes } from 'node:crypto';
import { claimSubmission, type AttemptClaim, type SendOutcome } from '@agent-reach/dispatch';
import { encodeTask, PROBE_CAPABILITY, type TaskMessage } from '@agent-reach/protocol';
import { randomPrefix, waitFor } from '@agent-reach/testkit';
import { Redis } from 'ioredis';
import { ReachAgent } from '../agent/agent.ts';
import type { ReachAgentOptions } from '../agent/options.ts';
import { startRegistryDouble, type RegistryDouble } from './registry-double.ts';
import { DoubleSendPath, specOf } from './send-path.ts';
import { readStream, redisUrl, testLogger, type EntryRecord } from './support.ts';

/** What {@link startHarness} gives a test. */
export interface Harness {
  prefix: string;
  redis: Redis;
  registry: RegistryDouble;
  /** A new agent wired to this harness (not started). */
  agent(options: Partial<ReachAgentOptions> & Pick<ReachAgentOptions, 'handler'>): ReachAgent;
  /**
   * Sends a task to the agent's inbox through the router's send path (send-path.ts): claimed,
   * delivered and counted by the production scripts, with the attempt and deadline given; a
   * probe (`PROBE_CAPABILITY`) as registry-sync's prober delivers it. Rejects when the delivery
   * refuses: the agent has no record, is not live (STARTING, DRAINING), has no free slot or
   * another epoch. Returns the entry id.
   */
  addTask(
    agentId: string,
    task: Partial<TaskMessage> & Pick<TaskMessage, 'task_id'>,
  ): Promise<string>;
  /**
   * Puts a task in a capability's pool through the router's send path (`capability` set to it),
   * claimed and recorded as pooled; returns the entry id.
   */
  addPoolTask(
    capability: string,
    task: Partial<TaskMessage> & Pick<TaskMessage, 'task_id'>,
  ): Promise<string>;
  /**
   * XADDs a task's entry to the agent's inbox by hand, past the delivery's checks, and writes
   * nothing else: for inbox states no delivery makes now — an entry a previous life of the agent
   * left, more entries than the agent has slots, an entry for an agent not yet ready. Use
   * {@link addTask} for everything else. Returns the entry id.
   */
  addEntryByHand(
    agentId: string,
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

/** The entry id of a send, or why there is none. */
function entryOf(outcome: SendOutcome, to: string): string {
  if (outcome.kind === 'sent') return outcome.messageId;
  const why = outcome.kind === 'refused' ? outcome.refusals.join(', ') || 'no record' : 'not ours';
  throw new Error(`the send to ${to} was refused (${why})`);
}

/**
 * The claim of a harness send: the router's own (`claimSubmission`; one nonce per task_id, so a
 * later attempt re-takes it as a re-sent command does), carrying the attempt and deadline the
 * test gives. A real retry's attempt is registry-sync's to assign, which no double runs.
 */
function claimAsGiven(path: DoubleSendPath, task: TaskMessage): AttemptClaim {
  const claim = claimSubmission(path.redis, path.keys, path.delivery, {
    task: specOf(task),
    nonce: `harness:${task.task_id}`,
    timeoutMs: 0,
    watchdogAt: Date.now() + 60_000,
  });
  return {
    async take(agent, route) {
      const taken = await claim.take(agent, route);
      return taken.ok ? { ...taken, attempt: task.attempt, deadlineMs: task.deadline_ms } : taken;
    },
    release: () => claim.release(),
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
  const path = new DoubleSendPath(redis, registry.keys, testLogger());
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
    async addTask(agentId, task) {
      const message = fullTask(task);
      if (message.capability === PROBE_CAPABILITY) {
        const probed = await path.probe(agentId, message);
        if (probed?.ok) return probed.messageId;
        throw new Error(`the probe of ${agentId} was refused (${probed?.refusal ?? 'no record'})`);
      }
      const claim = claimAsGiven(path, message);
      return entryOf(await path.toAgent(agentId, specOf(message), claim), agentId);
    },
    async addPoolTask(capability, task) {
      const message = fullTask({ ...task, capability });
      const claim = claimAsGiven(path, message);
      return entryOf(await path.toPool(specOf(message), claim), `the ${capability} pool`);
    },
    addEntryByHand(agentId, task) {
      return redis.xadd(
        registry.keys.inbox(agentId),
        '*',
        ...encodeTask(fullTask(task)),
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
