import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { taskFields, WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import {
  parsePendingEntry,
  poolStreamOf,
  type FleetEventLog,
  type PendingEntry,
} from '@agent-reach/dispatch';
import type { Resender } from '../tasks/resender.ts';
import type { RetryReason, TaskOutcomes } from '../tasks/outcomes.ts';
import { releaseScript } from '../commands/release.ts';
import { suspectScript } from '../commands/suspect.ts';
import { ownValue } from '../capability-settings.ts';

/** Bounds the sweep applies. */
export interface InflightSettings {
  receiptTimeoutMs: number;
  consumeBoundMs: number;
  /** A received task's execution lease, unless its capability has its own. */
  execLeaseMs: number;
  execLeaseMsByCapability: Record<string, number>;
}

interface AgentState {
  id: string;
  status: string | null;
  epoch: number;
  zombie: boolean;
  entries: PendingEntry[];
  /** task_id → when its lease was last renewed (keys.leases). */
  renewedAt: Record<string, string>;
}

/** What a received attempt's lease is: how long, and the latest it may run to (0: no cap). */
interface LeaseTerms {
  leaseMs: number;
  capAt: number;
}

/** What a received attempt's lease terms are read from. */
const TERMS = taskFields('capability', 'maxExecutionMs');

/** Reasons that move a task away from its agent at once rather than after a backoff. */
const REROUTE: ReadonlySet<RetryReason> = new Set([
  'agent_offline',
  'agent_gone',
  'fenced',
  'handoff',
  'lease_lapse',
]);

/** What an inflight sweeper needs. */
export interface InflightSweeperOptions {
  redis: RedisClient;
  keys: ReachKeys;
  outcomes: TaskOutcomes;
  resender: Resender;
  fleet: FleetEventLog;
  settings: InflightSettings;
  logger: Logger;
}

/**
 * Walks every delivered, unfinished task attempt (the agents' pending hashes) and takes back
 * those that will not finish where they are: on an OFFLINE or vanished agent, delivered under a
 * fenced epoch, unread on a draining agent, unreceived past the receipt timeout, or past their
 * deadline, or received but silent past its execution lease. A taken-back task is added to its next agent before it is acknowledged on the old
 * one (add-then-acknowledge; the attempt number de-duplicates). It also marks agents whose task
 * loop stopped consuming as SUSPECT, heartbeats or not.
 */
export class InflightSweeper {
  private readonly log: Logger;
  /**
   * The lease terms of each received attempt (`<agent>|<task>|<attempt>`), read from the task
   * once (its capability and `max_execution_ms`); dropped once the attempt leaves its agent.
   */
  private terms = new Map<string, LeaseTerms>();

  constructor(private readonly o: InflightSweeperOptions) {
    this.log = o.logger.child({ module: 'inflight-sweeper' });
  }

  /**
   * One pass; returns how many attempts were taken back and how many agents it marked SUSPECT
   * (a status change the routers must learn of at once).
   */
  async sweep(now: number): Promise<{ taken: number; suspected: number }> {
    let taken = 0;
    let suspected = 0;
    const agents = await this.load();
    await this.loadTerms(agents);
    for (const agent of agents) {
      let unconsumed = false;
      for (const entry of agent.entries) {
        const reason = this.reasonFor(agent, entry, now);
        if (entry.receivedAt === 0 && now - entry.sentAt >= this.o.settings.consumeBoundMs)
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
      return e.receivedAt === 0 && now - e.sentAt >= this.o.settings.consumeBoundMs
        ? 'receipt_timeout'
        : undefined;
    if (agent.status === 'DRAINING' && e.receivedAt === 0) return 'handoff';
    if (e.deadlineMs > 0 && now > e.deadlineMs) return 'deadline';
    if (e.receivedAt === 0 && now - e.sentAt >= this.o.settings.receiptTimeoutMs)
      return 'receipt_timeout';
    if (e.receivedAt > 0 && this.leaseLapsed(agent, e, now)) return 'lease_lapse';
    return undefined;
  }

  /**
   * A received attempt's lease runs from its receipt or its last renewal, for its capability's
   * lease; a task's `max_execution_ms` caps it, whatever the renewals.
   */
  private leaseLapsed(agent: AgentState, e: PendingEntry, now: number): boolean {
    const terms = this.terms.get(termsKey(agent.id, e));
    if (!terms) return false;
    const renewedAt = Math.max(e.receivedAt, Number(agent.renewedAt[e.taskId] ?? 0));
    let expiresAt = renewedAt + terms.leaseMs;
    if (terms.capAt > 0) expiresAt = Math.min(expiresAt, terms.capAt);
    return now >= expiresAt;
  }

  /**
   * Reads the lease terms of attempts received since the last pass (one pipeline), forgets those
   * of attempts that left, and deletes lease renewals of tasks no longer held.
   */
  private async loadTerms(agents: readonly AgentState[]): Promise<void> {
    const next = new Map<string, LeaseTerms>();
    const missing: { key: string; taskId: string; receivedAt: number }[] = [];
    const stale = slotPipeline(this.o.redis);
    let staleCount = 0;
    for (const agent of agents) {
      const held = new Set<string>();
      for (const e of agent.entries) {
        held.add(e.taskId);
        if (e.receivedAt === 0 || e.probe) continue;
        const key = termsKey(agent.id, e);
        const known = this.terms.get(key);
        if (known) next.set(key, known);
        else missing.push({ key, taskId: e.taskId, receivedAt: e.receivedAt });
      }
      const gone = Object.keys(agent.renewedAt).filter((id) => !held.has(id));
      if (gone.length > 0) {
        stale.add(this.o.keys.leases(agent.id), (p) =>
          p.hdel(this.o.keys.leases(agent.id), ...gone),
        );
        staleCount++;
      }
    }
    if (staleCount > 0) await stale.exec();
    if (missing.length > 0) {
      const read = slotPipeline(this.o.redis);
      for (const m of missing)
        read.add(this.o.keys.task(m.taskId), (p) =>
          p.hmget(this.o.keys.task(m.taskId), ...TERMS.fields),
        );
      const replies = await read.exec();
      missing.forEach((m, i) => {
        const task = TERMS.decode((replies[i]?.[1] ?? []) as (string | null)[]);
        const leaseMs =
          ownValue(this.o.settings.execLeaseMsByCapability, task.capability ?? '') ??
          this.o.settings.execLeaseMs;
        const maxMs = task.maxExecutionMs ?? 0;
        next.set(m.key, { leaseMs, capAt: maxMs > 0 ? m.receivedAt + maxMs : 0 });
      });
    }
    this.terms = next;
  }

  private async takeBack(agentId: string, e: PendingEntry, reason: RetryReason): Promise<void> {
    // A probe or a shadow copy is only released: neither is a caller's attempt to retry.
    if (!e.probe && !e.shadow) {
      const decision = await this.o.outcomes.retry({
        taskId: e.taskId,
        attempt: e.attempt,
        reason,
        agentId,
        immediate: REROUTE.has(reason),
        sent: { at: e.sentAt, messageId: e.messageId },
        ...(reason === 'deadline' ? { terminal: 'deadline' as const } : {}),
      });
      // Add to the next agent first, then acknowledge on this one.
      if (decision.kind === 'retry' && REROUTE.has(reason)) await this.o.resender.resend(e.taskId);
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
    const { pool } = await releaseScript.run(this.o.redis, {
      keys: {
        agent: this.o.keys.agent(agentId),
        pending: this.o.keys.pending(agentId),
        inbox: this.o.keys.inbox(agentId),
      },
      args: { taskId: e.taskId, attempt: e.attempt, group: WORKER_GROUP },
    });
    if (pool) {
      // A pull agent's task: its entry in the pool (its priority's band) is acknowledged and
      // deleted too.
      const stream = await poolStreamOf(this.o.redis, this.o.keys, pool.capability, e.taskId);
      await this.o.redis
        .pipeline()
        .xack(stream, WORKER_GROUP, pool.entryId)
        .xdel(stream, pool.entryId)
        .exec();
    }
  }

  /** Marks the agent SUSPECT; true when its status changed. */
  private async suspect(agentId: string): Promise<boolean> {
    const suspected = await suspectScript.run(this.o.redis, {
      keys: { agent: this.o.keys.agent(agentId) },
      args: {},
    });
    if (!suspected) return false;
    this.log.warn(
      { agent_id: agentId },
      'agent leaves tasks unread: SUSPECT until it consumes again',
    );
    this.o.fleet.append({
      kind: 'status',
      agent_id: agentId,
      from: 'HEALTHY',
      to: 'SUSPECT',
      reason: 'not_consuming',
    });
    return true;
  }

  private async load(): Promise<AgentState[]> {
    const ids = await this.o.redis.smembers(this.o.keys.agents());
    if (ids.length === 0) return [];
    const pipeline = slotPipeline(this.o.redis);
    for (const id of ids)
      pipeline.add(this.o.keys.agent(id), (p) =>
        p
          .hmget(this.o.keys.agent(id), 'status', 'epoch', 'zombie')
          .hgetall(this.o.keys.pending(id))
          .hgetall(this.o.keys.leases(id)),
      );
    const replies = await pipeline.exec();
    return ids.map((id, i) => {
      const [status, epoch, zombie] = (replies[3 * i]?.[1] ?? []) as (string | null)[];
      const pending = (replies[3 * i + 1]?.[1] ?? {}) as Record<string, string>;
      const renewedAt = (replies[3 * i + 2]?.[1] ?? {}) as Record<string, string>;
      const entries = Object.entries(pending)
        .map(([taskId, value]) => parsePendingEntry(taskId, value))
        .filter((e): e is PendingEntry => e !== undefined);
      return {
        id,
        status: status ?? null,
        epoch: Number(epoch ?? 0),
        zombie: zombie === '1',
        entries,
        renewedAt,
      };
    });
  }
}

/** Names one received attempt on one agent (a receipt time of its own: a new lease). */
function termsKey(agentId: string, e: PendingEntry): string {
  return `${agentId}|${e.taskId}|${e.attempt}|${e.receivedAt}`;
}
