/**
 * How the SDK's test doubles put tasks in Redis: through the real send path of
 * `@agent-reach/dispatch` — `TaskSender` over `Delivery`, as the router and registry-sync build
 * them — so a task a double sends is claimed, delivered and counted by the production scripts:
 * the task hash (claim-2.lua), the inbox or pool entry as agents get it, the agent's pending
 * entry and inflight count (deliver-3.lua). A change there reaches the SDK's tests too.
 *
 * Two parts of registry-sync's work are done by hand, since that app is not a package the SDK
 * may import: the agent record the registry double writes (registry-double.ts), which the
 * delivery re-verifies; and {@link DoubleSendPath.releaseFinished}, the release of a finished
 * task's slot, without which the agent's inflight count would only grow.
 */
import {
  Delivery,
  SnapshotHolder,
  TaskSender,
  defineDispatchCommands,
  parsePendingEntry,
  type AttemptClaim,
  type Candidate,
  type DeliveryResult,
  type SendOutcome,
  type TaskSenderOptions,
  type TaskSpec,
} from '@agent-reach/dispatch';
import { decodeAck, toAgentView, type ReachKeys, type TaskMessage } from '@agent-reach/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** The lease age past which the delivery refuses an agent: the registry double's `lease_ms`. */
export const DOUBLE_LEASE_MS = 30_000;

/** What the doubles do not record: the `sent` stage's event goes to InfluxDB in production. */
const NO_EVENTS: TaskSenderOptions['events'] = {
  write: () => undefined,
  flush: () => Promise.resolve(),
  close: () => Promise.resolve(),
  stats: () => ({ written: 0, dropped: 0, failedWrites: 0, buffered: 0, api: 'none' }),
};

/** The spec of a task as the router stores it, from the stream entry a test describes. */
export function specOf(task: TaskMessage): TaskSpec {
  return {
    taskId: task.task_id,
    capability: task.capability,
    payload: task.payload,
    callbackTopic: task.callback_topic,
    traceId: task.trace_id,
    tags: task.tags ?? [],
    region: task.region ?? '',
    regionPolicy: task.region_policy ?? 'prefer',
    sessionId: '',
    parentTaskId: task.parent_task_id ?? '',
    hops: task.hops ?? 0,
    traceAgents: [],
    tenant: '',
    priority: 0,
  };
}

/** The dispatch send path on one connection, with what the doubles add around it. */
export class DoubleSendPath {
  readonly delivery: Delivery;
  private readonly sender: TaskSender;
  /** The last acks entry {@link releaseFinished} has looked at. */
  private acksSeen = '0';

  constructor(
    readonly redis: Redis,
    readonly keys: ReachKeys,
    logger: Logger,
  ) {
    defineDispatchCommands(redis, ['claim', 'release-claim', 'deliver', 'record-pooled']);
    this.delivery = new Delivery({ redis, keys, leaseBoundMs: DOUBLE_LEASE_MS });
    this.sender = new TaskSender({
      redis,
      keys,
      delivery: this.delivery,
      // Never started: the sender only keeps its live counts; the candidate comes from the record.
      snapshot: new SnapshotHolder({ redis, subscriber: redis, keys, intervalMs: 60_000, logger }),
      events: NO_EVENTS,
      logger,
      sessionTtlS: 60,
    });
  }

  /**
   * Sends one attempt of `task` to `agentId` the way the router does (`TaskSender.send`, its
   * claim taken by `claim`), the agent as its record shows it; `refused` when there is no record.
   * Settles once the send's follow-up writes are done.
   */
  async toAgent(agentId: string, task: TaskSpec, claim: AttemptClaim): Promise<SendOutcome> {
    await this.releaseFinished();
    const agent = await this.candidate(agentId);
    const outcome = await this.sender.send({
      task,
      claim,
      to: { agents: agent ? [agent] : [], count: agent ? 1 : 0 },
      watched: true,
    });
    if (outcome.kind === 'sent') await outcome.recorded;
    return outcome;
  }

  /** Puts one attempt of `task` in its capability's pool, as the router does for pull agents. */
  async toPool(task: TaskSpec, claim: AttemptClaim): Promise<SendOutcome> {
    const outcome = await this.sender.send({
      task,
      claim,
      to: { pool: 'pull_agents', waitMs: 60_000 },
      watched: true,
    });
    if (outcome.kind === 'sent') await outcome.recorded;
    return outcome;
  }

  /** Delivers a liveness probe as registry-sync's prober does: no claim, its pending entry marked. */
  async probe(agentId: string, message: TaskMessage): Promise<DeliveryResult | undefined> {
    await this.releaseFinished();
    const agent = await this.candidate(agentId);
    return agent && this.delivery.deliver(agent.agent, message, { probe: true });
  }

  /**
   * Releases the slot of every task whose final ack came since the last call: its pending entry
   * goes when the ack is for the attempt and epoch it holds. By hand: registry-sync's ack step
   * does this (with the task's own bookkeeping, which no double reads), and sends after the ack
   * find the agent's inflight count lowered. Called before each delivery, so a test that waited
   * for a task's acks delivers the next one to a freed slot.
   */
  async releaseFinished(): Promise<void> {
    const entries = await this.redis.xrange(this.keys.acks(), `(${this.acksSeen}`, '+');
    for (const [id, fields] of entries) {
      this.acksSeen = id;
      const ack = decodeAck(fields);
      if (!ack.ok || ack.value.pool !== undefined) continue;
      const { stage, agent_id: agentId, task_id: taskId, attempt, epoch } = ack.value;
      if (stage !== 'completed' && stage !== 'failed') continue;
      const pending = this.keys.pending(agentId);
      const value = await this.redis.hget(pending, taskId);
      const entry = value === null ? undefined : parsePendingEntry(taskId, value);
      if (entry?.attempt === attempt && entry.epoch === epoch)
        await this.redis.hdel(pending, taskId);
    }
  }

  /** The agent as the router would rank it, from its record; undefined when it has none. */
  private async candidate(agentId: string): Promise<Candidate | undefined> {
    const view = toAgentView(await this.redis.hgetall(this.keys.agent(agentId)), 0, Date.now());
    if (view === undefined) return undefined;
    const agent = {
      agent_id: view.agent_id,
      instance_id: view.instance_id,
      epoch: view.epoch,
      status: view.status,
      capabilities: view.capabilities,
      max_concurrency: view.max_concurrency,
      inflight: 0,
      region: view.region,
      channel: view.channel,
      lease_age_ms: view.lease_age_ms,
    };
    return { agent, load: 0, score: 0 };
  }
}
