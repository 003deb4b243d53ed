import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { parsePendingEntry, type FleetEventLog, type PendingEntry } from '@agent-reach/dispatch';
import type { Resender } from '../tasks/resender.ts';
import type { RetryReason, TaskOutcomes } from '../tasks/outcomes.ts';
import { decodeReleaseReply, decodeSuspectReply } from '../commands/index.ts';

/** Bounds the sweep applies. */
export interface InflightSettings {
  receiptTimeoutMs: number;
  consumeBoundMs: number;
}

interface AgentState {
  id: string;
  status: string | null;
  epoch: number;
  zombie: boolean;
  entries: PendingEntry[];
}

/** Reasons that move a task away from its agent at once rather than after a backoff. */
const REROUTE: ReadonlySet<RetryReason> = new Set([
  'agent_offline',
  'agent_gone',
  'fenced',
  'handoff',
]);

/**
 * Walks every delivered, unfinished task attempt (the agents' pending hashes) and takes back
 * those that will not finish where they are: on an OFFLINE or vanished agent, delivered under a
 * fenced epoch, unread on a draining agent, unreceived past the receipt timeout, or past their
 * deadline. A taken-back task is added to its next agent before it is acknowledged on the old
 * one (add-then-acknowledge; the attempt number de-duplicates). It also marks agents whose task
 * loop stopped consuming as SUSPECT, heartbeats or not.
 */
export class InflightSweeper {
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly outcomes: TaskOutcomes,
    private readonly resender: Resender,
    private readonly fleet: FleetEventLog,
    private readonly settings: InflightSettings,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'inflight-sweeper' });
  }

  /**
   * One pass; returns how many attempts were taken back and how many agents it marked SUSPECT
   * (a status change the routers must learn of at once).
   */
  async sweep(now: number): Promise<{ taken: number; suspected: number }> {
    let taken = 0;
    let suspected = 0;
    for (const agent of await this.load()) {
      let unconsumed = false;
      for (const entry of agent.entries) {
        const reason = this.reasonFor(agent, entry, now);
        if (entry.receivedAt === 0 && now - entry.sentAt >= this.settings.consumeBoundMs)
          unconsumed = true;
        if (!reason) continue;
        await this.takeBack(agent.id, entry, reason);
        taken++;
      }
      if (
        unconsumed &&
        !agent.zombie &&
        agent.status === 'HEALTHY' &&
        (await this.suspect(agent.id))
      )
        suspected++;
    }
    return { taken, suspected };
  }

  private reasonFor(agent: AgentState, e: PendingEntry, now: number): RetryReason | undefined {
    if (agent.status === null) return 'agent_gone';
    if (agent.status === 'OFFLINE') return 'agent_offline';
    if (e.epoch < agent.epoch) return 'fenced';
    if (e.probe)
      return e.receivedAt === 0 && now - e.sentAt >= this.settings.consumeBoundMs
        ? 'receipt_timeout'
        : undefined;
    if (agent.status === 'DRAINING' && e.receivedAt === 0) return 'handoff';
    if (e.deadlineMs > 0 && now > e.deadlineMs) return 'deadline';
    if (e.receivedAt === 0 && now - e.sentAt >= this.settings.receiptTimeoutMs)
      return 'receipt_timeout';
    return undefined;
  }

  private async takeBack(agentId: string, e: PendingEntry, reason: RetryReason): Promise<void> {
    if (!e.probe) {
      const decision = await this.outcomes.retry({
        taskId: e.taskId,
        attempt: e.attempt,
        reason,
        agentId,
        immediate: REROUTE.has(reason),
        sent: { at: e.sentAt, messageId: e.messageId },
        ...(reason === 'deadline' ? { terminal: 'deadline' as const } : {}),
      });
      // Add to the next agent first, then acknowledge on this one.
      if (decision.kind === 'retry' && REROUTE.has(reason)) await this.resender.resend(e.taskId);
      this.log.info(
        {
          task_id: e.taskId,
          agent_id: agentId,
          attempt: e.attempt,
          reason,
          decision: decision.kind,
        },
        'task taken back',
      );
    }
    const { pool } = decodeReleaseReply(
      await this.redis.reachRelease(
        this.keys.agent(agentId),
        this.keys.pending(agentId),
        this.keys.inbox(agentId),
        e.taskId,
        e.attempt,
        WORKER_GROUP,
      ),
    );
    if (pool) {
      // A pull agent's task: its entry in the pool is acknowledged and deleted too.
      await this.redis
        .pipeline()
        .xack(this.keys.pool(pool.capability), WORKER_GROUP, pool.entryId)
        .xdel(this.keys.pool(pool.capability), pool.entryId)
        .exec();
    }
  }

  /** Marks the agent SUSPECT; true when its status changed. */
  private async suspect(agentId: string): Promise<boolean> {
    if (!decodeSuspectReply(await this.redis.reachSuspect(this.keys.agent(agentId)))) return false;
    this.log.warn(
      { agent_id: agentId },
      'agent leaves tasks unread: SUSPECT until it consumes again',
    );
    this.fleet.append({
      kind: 'status',
      agent_id: agentId,
      from: 'HEALTHY',
      to: 'SUSPECT',
      reason: 'not_consuming',
    });
    return true;
  }

  private async load(): Promise<AgentState[]> {
    const ids = await this.redis.smembers(this.keys.agents());
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids)
      pipeline
        .hmget(this.keys.agent(id), 'status', 'epoch', 'zombie')
        .hgetall(this.keys.pending(id));
    const replies = (await pipeline.exec()) ?? [];
    return ids.map((id, i) => {
      const [status, epoch, zombie] = (replies[2 * i]?.[1] ?? []) as (string | null)[];
      const pending = (replies[2 * i + 1]?.[1] ?? {}) as Record<string, string>;
      const entries = Object.entries(pending)
        .map(([taskId, value]) => parsePendingEntry(taskId, value))
        .filter((e): e is PendingEntry => e !== undefined);
      return {
        id,
        status: status ?? null,
        epoch: Number(epoch ?? 0),
        zombie: zombie === '1',
        entries,
      };
    });
  }
}
